import type { Upstream } from './routing-table.ts';

/** Failures in a row after which a replica gets no requests until a health probe passes. */
export const FAILURES_TO_EJECT = 3;
/** How often an ejected replica is probed. */
export const PROBE_EVERY_MS = 1000;

/**
 * Which replicas the gateway stops routing to: one that failed FAILURES_TO_EJECT requests in a row
 * (refused, reset, 5xx) is probed at `GET /health` on its endpoint's host, and routed to again once a
 * probe answers 200. A success resets its count.
 */
export class ReplicaHealth {
  private readonly failures = new Map<string, number>();
  private readonly probing = new Map<string, NodeJS.Timeout>();

  constructor(private readonly probe: (upstream: Upstream) => Promise<boolean> = probeHealth) {}

  routable(id: string): boolean {
    return !this.probing.has(id);
  }

  succeeded(id: string) {
    this.failures.delete(id);
  }

  failed(upstream: Upstream) {
    const count = (this.failures.get(upstream.id) ?? 0) + 1;
    this.failures.set(upstream.id, count);
    if (count < FAILURES_TO_EJECT || this.probing.has(upstream.id)) return;
    const timer = setInterval(async () => {
      if (!(await this.probe(upstream).catch(() => false)) || !this.probing.has(upstream.id)) return;
      this.forget(upstream.id);
    }, PROBE_EVERY_MS);
    timer.unref();
    this.probing.set(upstream.id, timer);
  }

  /** Forgets replicas the routing table no longer has (stopped), and their probes. */
  keepOnly(ids: ReadonlySet<string>) {
    for (const id of [...this.failures.keys(), ...this.probing.keys()]) if (!ids.has(id)) this.forget(id);
  }

  stop() {
    for (const id of [...this.probing.keys()]) this.forget(id);
  }

  private forget(id: string) {
    clearInterval(this.probing.get(id));
    this.probing.delete(id);
    this.failures.delete(id);
  }
}

/** vLLM, SGLang and llama.cpp all answer `GET /health` at the root of the host that serves /v1. */
async function probeHealth(upstream: Upstream): Promise<boolean> {
  const answer = await fetch(new URL('/health', upstream.endpoint), { signal: AbortSignal.timeout(2000) });
  await answer.body?.cancel();
  return answer.ok;
}
