import type { GatewayConfig } from '../config.ts';
import { servesRequests } from '../domain/model.ts';
import { Refusal } from './errors.ts';
import type { LoadReporter } from './load-reporter.ts';
import type { ReplicaHealth } from './replica-health.ts';
import type { RoutingTable, Upstream } from './routing-table.ts';

/** What a client held past the wait is told to wait before it tries again. */
const RETRY_AFTER_S = 5;

/**
 * Where a model's requests may go now, and the wait for a replica when there is none (a model scaling
 * from zero): a held request counts as waiting in the model's load, which makes its reconciler start a
 * replica. It waits up to `queueMs` (then 503); a model holds at most `queueMax` (then 429).
 */
export class Admission {
  /** When each held request started waiting, per model: the oldest one's age is a metric. */
  private readonly held = new Map<string, Set<{ since: number }>>();

  constructor(
    private readonly table: RoutingTable,
    private readonly health: ReplicaHealth,
    private readonly reporter: LoadReporter,
    private readonly config: Pick<GatewayConfig, 'queueMs' | 'queueMax'>,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * The model's ready replicas that may get requests; waits for one when there is none, until the
   * client leaves (`leaving` is asked for only then: most requests never wait).
   */
  replicasOf(model: string, leaving: () => AbortSignal): readonly Upstream[] | Promise<readonly Upstream[]> {
    const ready = this.routable(model);
    // Ready ones: at once, with no promise (nearly every request).
    return ready.length > 0 ? ready : this.hold(model, leaving);
  }

  /** Holds a request of a model with no ready replica until one is ready, or refuses it. */
  private async hold(model: string, leaving: () => AbortSignal): Promise<readonly Upstream[]> {
    this.refuseUnservable(model);
    if ((this.held.get(model)?.size ?? 0) >= this.config.queueMax) {
      throw new Refusal(
        'queue_full',
        `model ${model} has no ready replica and already holds ${this.config.queueMax} requests waiting for one (LLMGW_GATEWAY_QUEUE_MAX); try again later`,
        RETRY_AFTER_S,
      );
    }
    const request = { since: this.now() };
    const held = this.held.get(model) ?? new Set();
    this.held.set(model, held);
    held.add(request);
    this.reporter.change(model, 0, 1);
    try {
      return await this.waitForReplica(model, leaving());
    } finally {
      held.delete(request);
      if (held.size === 0) this.held.delete(model);
      this.reporter.change(model, 0, -1);
    }
  }

  /** Seconds the longest-held request of each model has waited. */
  oldestHeldSeconds(): Map<string, number> {
    const at = this.now();
    return new Map(
      [...this.held].map(([model, requests]) => [
        model,
        (at - Math.min(...[...requests].map((r) => r.since))) / 1000,
      ]),
    );
  }

  /** The models with requests held, and how many. */
  heldCounts(): Map<string, number> {
    return new Map([...this.held].map(([model, requests]) => [model, requests.size]));
  }

  /** A model none of whose profiles has an engine never gets a replica that serves: no wait helps. */
  private refuseUnservable(model: string) {
    const profiles = this.table.current(model)?.model.profiles;
    if (!profiles || profiles.some(servesRequests)) return;
    throw new Refusal(
      'not_servable',
      `model ${model} cannot serve requests: none of its profiles (${profiles.map((p) => p.name).join(', ')}) has a runtime or an engine, so its replicas have no endpoint; give a profile a runtime (docs/api.md#models)`,
    );
  }

  private routable(model: string): Upstream[] {
    return (this.table.current(model)?.replicas ?? []).filter((r) => this.health.routable(r.id));
  }

  private waitForReplica(model: string, signal: AbortSignal): Promise<readonly Upstream[]> {
    return new Promise((resolve, reject) => {
      const end = (outcome: () => void) => {
        clearTimeout(timer);
        stopListening();
        signal.removeEventListener('abort', aborted);
        outcome();
      };
      const stopListening = this.table.onRefresh(() => {
        if (!this.table.current(model)) {
          end(() => reject(new Refusal('unknown_model', `model ${model} was deleted while waiting`)));
          return;
        }
        const ready = this.routable(model);
        if (ready.length > 0) end(() => resolve(ready));
      });
      const timer = setTimeout(
        () =>
          end(() =>
            reject(
              new Refusal(
                'no_replica',
                `model ${model} has no ready replica after ${Math.round(this.config.queueMs / 1000)} s (LLMGW_GATEWAY_QUEUE_S); its reconciler's decisions say why (llmgw ctl model decisions ${model})`,
                RETRY_AFTER_S,
              ),
            ),
          ),
        this.config.queueMs,
      );
      const aborted = () => end(() => reject(signal.reason));
      signal.addEventListener('abort', aborted, { once: true });
    });
  }
}
