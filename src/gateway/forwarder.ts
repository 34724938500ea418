import { pickReplica } from './balancer.ts';
import { Refusal } from './errors.ts';
import type { LoadReporter } from './load-reporter.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { ReplicaHealth } from './replica-health.ts';
import type { Upstream } from './routing-table.ts';
import {
  type AttemptParts,
  CLIENT_LEFT,
  causeOf,
  countEnded,
  exchange,
  FirstByteTimeout,
  type Forwarded,
  type ForwardingSettings,
  RequestTimeout,
  StaleConnection,
} from './upstream-attempt.ts';

export type { Forwarded, ForwardingSettings } from './upstream-attempt.ts';

/** Chooses the replica of `free` a request goes to, and says why (a label of the selections metric). */
export type ChooseReplica = (
  request: Forwarded,
  free: readonly Upstream[],
  inFlight: (id: string) => number,
) => { upstream: Upstream; reason: string } | undefined;

/** Fewest in flight, ties at random. */
export const leastInFlight: ChooseReplica = (_request, free, inFlight) => {
  const upstream = pickReplica(free, inFlight);
  return upstream && { upstream, reason: 'least_in_flight' };
};

/**
 * Sends requests to replicas and writes their answers to the client as they come, pausing the replica's
 * stream while the client's socket is full: a slow client slows its stream instead of filling memory.
 * Counts each request in flight for its model's load and its replica's share, until its answer ends or
 * the client leaves (which cancels the request on the replica).
 */
export class Forwarder {
  private readonly perReplica = new Map<string, number>();
  /** Requests waiting for a free slot, per model, first come first served. */
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly parts: AttemptParts;

  constructor(
    private readonly health: ReplicaHealth,
    private readonly reporter: LoadReporter,
    private readonly metrics: GatewayMetrics,
    /** The model's ready replicas now: what a request that waited for a slot chooses from. */
    private readonly replicasNow: (model: string) => readonly Upstream[],
    private readonly settings: ForwardingSettings,
    private readonly choose: ChooseReplica = leastInFlight,
    private readonly log: Pick<Console, 'warn'> = console,
  ) {
    this.parts = { metrics, health, settings };
  }

  /** Requests in flight to the replica from this gateway. */
  inFlightOn(id: string): number {
    return this.perReplica.get(id) ?? 0;
  }

  /**
   * Resolves once the answer has begun; throws a Refusal when no replica could begin it. A request finds
   * every replica it may go to at its slots (Upstream.slots) waits, in turn, for the next free slot on
   * any replica of its model, counted as waiting in the model's load: queued in the gateway, not inside
   * one engine while another has room.
   */
  async forward(request: Forwarded, replicas: readonly Upstream[]): Promise<void> {
    // The replicas that failed this request: made at the first failure, which most requests never meet.
    let tried: Set<string> | undefined;
    let failure = '';
    let choices = replicas;
    let woken = false;
    for (let attempt = 0; attempt <= this.settings.retries; ) {
      // A client gone before this attempt closed before its 'close' could be heard: nothing would end it.
      if (request.client.destroyed) return this.counted(request, CLIENT_LEFT);
      // A newcomer does not pass the requests already waiting; one whose turn came takes its slot.
      const queued = !woken && this.waiting.has(request.model);
      let candidates = 0;
      const free: Upstream[] = [];
      for (const replica of choices) {
        if (tried?.has(replica.id) || !this.health.routable(replica.id)) continue;
        candidates++;
        if (!queued && this.hasSlot(replica)) free.push(replica);
      }
      if (candidates > 0 && free.length === 0) {
        // Its turn came and another took the slot first: it waits at the head of the line again.
        if (!(await this.slotFor(request, woken))) return this.counted(request, CLIENT_LEFT);
        woken = true;
        choices = this.replicasNow(request.model);
        continue;
      }
      const chosen = this.choose(request, free, this.inFlight);
      if (!chosen) break;
      const { upstream } = chosen;
      if (attempt > 0) {
        await backoff(this.settings.retryBackoffMs, attempt);
        if (request.client.destroyed) return this.counted(request, CLIENT_LEFT);
      }
      attempt++;
      this.metrics.selections.inc(request.model, attempt > 1 ? 'retry' : chosen.reason);
      try {
        return await this.attemptOn(request, upstream);
      } catch (error) {
        tried ??= new Set();
        tried.add(upstream.id);
        if (request.client.destroyed) return;
        const cause = causeOf(error);
        this.metrics.replicaErrors.inc({
          model: request.model,
          replica: upstream.id,
          kind: errorKind(error),
        });
        if (error instanceof RequestTimeout) {
          throw new Refusal(
            'upstream_timeout',
            `replica ${upstream.id} ${error.message} (LLMGW_GATEWAY_REQUEST_TIMEOUT_S)`,
          );
        }
        this.health.failed(
          upstream,
          error instanceof FirstByteTimeout ? 'first_byte_timeout' : 'errors',
          cause,
        );
        failure = `replica ${upstream.id} failed before answering (${cause})`;
        this.log.warn(`gateway: request ${request.requestId} of model ${request.model}: ${failure}`);
      }
    }
    throw new Refusal(
      'upstream_failed',
      failure
        ? `${failure}, and no other ready replica of model ${request.model} could take the request`
        : `no ready replica of model ${request.model} may take requests now (each failed its last requests and awaits a health probe)`,
    );
  }

  private readonly inFlight = (id: string) => this.perReplica.get(id) ?? 0;

  private hasSlot(upstream: Upstream): boolean {
    return upstream.slots === undefined || (this.perReplica.get(upstream.id) ?? 0) < upstream.slots;
  }

  /**
   * Waits for a slot of the request's model to free (or for the routes to change): false when the client
   * left meanwhile. The request counts as waiting in the model's load while it waits.
   */
  private slotFor(request: Forwarded, first: boolean): Promise<boolean> {
    const { model, client } = request;
    const queue = this.waiting.get(model) ?? [];
    this.waiting.set(model, queue);
    this.reporter.change(model, 0, 1);
    return new Promise((resolve) => {
      const done = (served: boolean) => {
        client.off('close', left);
        this.reporter.change(model, 0, -1);
        resolve(served);
      };
      const turn = () => done(true);
      const left = () => {
        const at = queue.indexOf(turn);
        if (at >= 0) queue.splice(at, 1);
        if (queue.length === 0 && this.waiting.get(model) === queue) this.waiting.delete(model);
        done(false);
      };
      if (first) queue.unshift(turn);
      else queue.push(turn);
      client.once('close', left);
    });
  }

  /**
   * Gives freed slots of the model to the requests waiting for one, oldest first: as many as its
   * replicas now have free. Called when a request ends and when the routes change (a replica ready).
   */
  wakeWaiting(model: string) {
    const queue = this.waiting.get(model);
    if (!queue) return;
    const routable = this.replicasNow(model).filter((upstream) => this.health.routable(upstream.id));
    // With no replica left to wait for, every request is woken to be refused (or held by admission).
    let free = routable.length === 0 ? queue.length : 0;
    for (const upstream of routable) {
      const used = this.perReplica.get(upstream.id) ?? 0;
      free += upstream.slots === undefined ? queue.length : Math.max(0, upstream.slots - used);
    }
    const woken = queue.splice(0, free);
    if (queue.length === 0) this.waiting.delete(model);
    for (const turn of woken) turn();
  }

  /** After the routes changed: slots may have come (a replica ready) or gone. */
  wakeAllWaiting() {
    for (const model of [...this.waiting.keys()]) this.wakeWaiting(model);
  }

  /** The models with requests waiting for a slot, and how many. */
  waitingCounts(): Map<string, number> {
    return new Map([...this.waiting].map(([model, queue]) => [model, queue.length]));
  }

  /** Counts one request in flight; the returned function ends it (once). */
  private begin(model: string, replica: string): () => void {
    this.reporter.change(model, 1, 0);
    this.perReplica.set(replica, (this.perReplica.get(replica) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.reporter.change(model, -1, 0);
      const left = (this.perReplica.get(replica) ?? 1) - 1;
      if (left > 0) this.perReplica.set(replica, left);
      else this.perReplica.delete(replica);
      if (this.waiting.has(model)) this.wakeWaiting(model);
    };
  }

  /**
   * One replica's try: a request lost on a stale pooled connection is sent again to the same replica on a
   * connection of its own (a fresh one cannot be stale), so only what the replica itself did fails it.
   */
  private async attemptOn(request: Forwarded, upstream: Upstream): Promise<void> {
    try {
      return await exchange(this.parts, request, upstream, false, this.begin(request.model, upstream.id));
    } catch (error) {
      if (!(error instanceof StaleConnection) || request.client.destroyed) throw error;
      this.metrics.staleRetries.inc({ model: request.model });
      return await exchange(
        this.parts,
        request,
        upstream,
        true,
        this.begin(request.model, upstream.id),
      ).catch((again) => {
        throw again instanceof StaleConnection ? again.cause : again;
      });
    }
  }

  /** A request's answer is over (or its client left): counted by its status, and timed. */
  private counted(request: Forwarded, status: number) {
    countEnded(this.metrics, request, status);
  }
}

/** Attempt n (from 1) after a failure waits a random time up to base * 2^(n-1): full jitter. */
function backoff(baseMs: number, attempt: number): Promise<void> | undefined {
  if (baseMs <= 0) return undefined;
  return new Promise((resolve) => setTimeout(resolve, Math.random() * baseMs * 2 ** (attempt - 1)));
}

/** The kind of a failure before the first byte, a label of the per-replica errors metric. */
function errorKind(error: unknown): string {
  if (error instanceof FirstByteTimeout || error instanceof RequestTimeout) return error.code;
  return 'connection';
}
