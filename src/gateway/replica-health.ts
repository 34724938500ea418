import type { GatewayConfig } from '../config.ts';
import type { Upstream } from './routing-table.ts';

/** Why a replica gets no requests: what the gateway saw of it. */
export type EjectionReason = 'errors' | 'first_byte_timeout' | 'health_check' | 'latency';

export type HealthSettings = Pick<
  GatewayConfig,
  | 'ejectFailures'
  | 'healthIntervalMs'
  | 'healthTimeoutMs'
  | 'healthUnhealthy'
  | 'healthHealthy'
  | 'latencyOutlierFactor'
>;

/** An ejected replica is probed at least this often, so that one that recovered is back soon. */
export const EJECTED_PROBE_MS = 1000;
/**
 * Times to first byte a replica (and its model's others) must have before its latency can make it an
 * outlier: a few slow answers (a long prompt) say nothing.
 */
export const LATENCY_SAMPLES = 20;
/** Below this recent time to first byte no replica is an outlier, however fast the others are. */
export const LATENCY_FLOOR_MS = 250;
/** How long a latency outlier stays out, times the ejections it had (Envoy's base ejection time). */
export const LATENCY_EJECT_MS = 30_000;
/** Weight of each new time to first byte in a replica's moving average. */
const EWMA_WEIGHT = 0.1;

interface ReplicaState {
  upstream: Upstream;
  model: string;
  /** Failed requests in a row (passive): reset by a success. */
  failures: number;
  /** Probes in a row that failed, and that passed. */
  probeFailures: number;
  probePasses: number;
  probing: boolean;
  lastProbeAt: number;
  ejected?: { reason: EjectionReason; at: number; detail: string; until: number };
  ejections: number;
  /** Moving average of its times to first byte (ms) since it was last taken back, and their count. */
  ttftMs: number;
  samples: number;
}

/** A replica's health as GET /replicas shows it. */
export interface ReplicaHealthView {
  id: string;
  model: string;
  endpoint: string;
  routable: boolean;
  ejected: { reason: EjectionReason; since: string; detail: string } | null;
  ejections: number;
  ttft_ms_recent: number | null;
}

export type EjectionListener = (model: string, replica: string, reason: EjectionReason) => void;

/**
 * Which replicas the gateway routes to. A replica is ejected (gets no requests) when
 * - `ejectFailures` requests in a row failed on it (refused, reset, 5xx: `errors`; no first byte within
 *   the first-byte timeout: `first_byte_timeout`);
 * - `healthUnhealthy` probes of its `GET /health` in a row failed or took over `healthTimeoutMs`
 *   (`health_check`): every replica is probed every `healthIntervalMs`, so one that hangs (SIGSTOP)
 *   is found without a request having to wait on it;
 * - its recent time to first byte is `latencyOutlierFactor` times the median of its model's other
 *   replicas' (`latency`), for LATENCY_EJECT_MS times its ejections so far; never more than half of a
 *   model's replicas are out for latency, since a slow replica still serves.
 * It is taken back once `healthHealthy` probes in a row passed (and a latency ejection's time is over);
 * an ejected replica is probed every EJECTED_PROBE_MS at least.
 */
export class ReplicaHealth {
  private readonly states = new Map<string, ReplicaState>();
  private timer?: NodeJS.Timeout;
  private readonly listeners: EjectionListener[] = [];

  constructor(
    private readonly settings: HealthSettings,
    private readonly probe: (upstream: Upstream, timeoutMs: number) => Promise<boolean> = probeHealth,
    private readonly now: () => number = Date.now,
  ) {}

  /** Probes every replica from now on, until stop(). */
  start() {
    const tick = Math.min(this.settings.healthIntervalMs, EJECTED_PROBE_MS);
    this.timer = setInterval(() => this.probeDue(), tick);
    this.timer.unref();
  }

  stop() {
    clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Calls `listener` at each ejection (for the metrics). */
  onEjection(listener: EjectionListener) {
    this.listeners.push(listener);
  }

  /** The replicas of each model now: new ones are probed from now on, gone ones forgotten. */
  watch(routes: Iterable<{ model: string; replicas: readonly Upstream[] }>) {
    const seen = new Set<string>();
    for (const { model, replicas } of routes) {
      for (const upstream of replicas) {
        seen.add(upstream.id);
        const state = this.states.get(upstream.id);
        if (state) {
          state.upstream = upstream;
          state.model = model;
        } else this.states.set(upstream.id, this.fresh(upstream, model));
      }
    }
    for (const id of this.states.keys()) if (!seen.has(id)) this.states.delete(id);
  }

  routable(id: string): boolean {
    return this.states.get(id)?.ejected === undefined;
  }

  succeeded(id: string) {
    const state = this.states.get(id);
    if (state) state.failures = 0;
  }

  /** A request failed on the replica before its answer began (or with a 5xx). */
  failed(upstream: Upstream, reason: 'errors' | 'first_byte_timeout' = 'errors', detail = '') {
    const state = this.stateOf(upstream);
    state.failures++;
    if (state.failures >= this.settings.ejectFailures && !state.ejected) {
      this.eject(
        state,
        reason,
        `${state.failures} requests in a row failed${detail ? ` (last: ${detail})` : ''}`,
      );
    }
  }

  /** The replica's time to first byte for one request: its average, and whether it is an outlier. */
  observeTtft(upstream: Upstream, ms: number) {
    const state = this.states.get(upstream.id);
    if (!state || state.ejected) return;
    state.ttftMs = state.samples === 0 ? ms : state.ttftMs + EWMA_WEIGHT * (ms - state.ttftMs);
    state.samples++;
    if (state.samples < LATENCY_SAMPLES || state.ttftMs < LATENCY_FLOOR_MS) return;
    const peers: number[] = [];
    let outForLatency = 0;
    let replicas = 0;
    for (const other of this.states.values()) {
      if (other.model !== state.model) continue;
      replicas++;
      if (other.ejected?.reason === 'latency') outForLatency++;
      if (other !== state && !other.ejected && other.samples >= LATENCY_SAMPLES) peers.push(other.ttftMs);
    }
    if (peers.length === 0 || outForLatency + 1 > replicas / 2) return;
    const typical = median(peers);
    if (state.ttftMs < this.settings.latencyOutlierFactor * typical) return;
    const until = this.now() + LATENCY_EJECT_MS * (state.ejections + 1);
    this.eject(
      state,
      'latency',
      `its recent time to first byte, ${Math.round(state.ttftMs)} ms, is over ${this.settings.latencyOutlierFactor} times its model's other replicas' (${Math.round(typical)} ms)`,
      until,
    );
  }

  /** Every known replica's health, for GET /replicas. */
  view(): ReplicaHealthView[] {
    return [...this.states.values()].map((state) => ({
      id: state.upstream.id,
      model: state.model,
      endpoint: state.upstream.endpoint,
      routable: !state.ejected,
      ejected: state.ejected
        ? {
            reason: state.ejected.reason,
            since: new Date(state.ejected.at).toISOString(),
            detail: state.ejected.detail,
          }
        : null,
      ejections: state.ejections,
      ttft_ms_recent: state.samples > 0 ? Math.round(state.ttftMs * 10) / 10 : null,
    }));
  }

  /** Probes the replicas whose probe is due: every interval, an ejected one every EJECTED_PROBE_MS. */
  probeDue() {
    const at = this.now();
    for (const state of this.states.values()) {
      const every = state.ejected
        ? Math.min(this.settings.healthIntervalMs, EJECTED_PROBE_MS)
        : this.settings.healthIntervalMs;
      if (state.probing || at - state.lastProbeAt < every) continue;
      state.probing = true;
      state.lastProbeAt = at;
      this.probe(state.upstream, this.settings.healthTimeoutMs)
        .catch(() => false)
        .then((passed) => {
          state.probing = false;
          if (this.states.get(state.upstream.id) === state) this.probed(state, passed);
        });
    }
  }

  private probed(state: ReplicaState, passed: boolean) {
    if (!passed) {
      state.probePasses = 0;
      state.probeFailures++;
      if (state.probeFailures >= this.settings.healthUnhealthy && !state.ejected) {
        this.eject(
          state,
          'health_check',
          `${state.probeFailures} health probes in a row failed or took over ${this.settings.healthTimeoutMs} ms`,
        );
      }
      return;
    }
    state.probeFailures = 0;
    state.probePasses++;
    const back =
      state.ejected && state.probePasses >= this.settings.healthHealthy && this.now() >= state.ejected.until;
    if (!back) return;
    state.ejected = undefined;
    state.failures = 0;
    state.samples = 0;
  }

  private eject(state: ReplicaState, reason: EjectionReason, detail: string, until = 0) {
    state.ejected = { reason, at: this.now(), detail, until };
    state.ejections++;
    state.probePasses = 0;
    for (const listener of this.listeners) listener(state.model, state.upstream.id, reason);
  }

  /** A replica the table has not shown yet (a request raced its read): known from now on. */
  private stateOf(upstream: Upstream): ReplicaState {
    let state = this.states.get(upstream.id);
    if (!state) {
      state = this.fresh(upstream, '');
      this.states.set(upstream.id, state);
    }
    return state;
  }

  private fresh(upstream: Upstream, model: string): ReplicaState {
    return {
      upstream,
      model,
      failures: 0,
      probeFailures: 0,
      probePasses: 0,
      probing: false,
      // Its first probe is one interval away: a replica the table just read as ready answered one.
      lastProbeAt: this.now(),
      ejections: 0,
      ttftMs: 0,
      samples: 0,
    };
  }
}

function median(values: number[]): number {
  const sorted = values.sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

/** vLLM, SGLang and llama.cpp all answer `GET /health` at the root of the host that serves /v1. */
async function probeHealth(upstream: Upstream, timeoutMs: number): Promise<boolean> {
  const answer = await fetch(new URL('/health', upstream.endpoint), {
    signal: AbortSignal.timeout(timeoutMs),
  });
  await answer.body?.cancel();
  return answer.ok;
}
