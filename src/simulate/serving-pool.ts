import { Heap } from 'heap-js';

/** A request as the simulator serves it: when it arrives and how long it holds a slot. */
export interface ServedRequest {
  /** Milliseconds since the epoch. */
  at: number;
  serviceMs: number;
}

/** Slots of each ready replica of a model, by replica ID. */
export type ReadySlots = ReadonlyMap<string, number>;

/**
 * One model's requests on its replicas, as the gateway routes them: a request goes to the ready
 * replica with the fewest in flight that has a free slot, else it waits (first come, first served).
 * The ready replicas change only between calls to `advance`; a replica that stops being ready (it
 * drains) finishes the requests it holds and gets no new one.
 */
export class ServingPool {
  /** The ends of the requests being served, soonest first; ties in the order they started (`seq`). */
  private readonly ends = new Heap<{ at: number; seq: number; replica: string }>(
    (a, b) => a.at - b.at || a.seq - b.seq,
  );
  private started = 0;
  private readonly onReplica = new Map<string, number>();
  private readonly queue: number[] = [];
  private queueHead = 0;
  private next = 0;
  private since: number | undefined;
  /** Queueing delay of each request that started, by index; NaN while it has not. */
  readonly waits: Float64Array;

  constructor(private readonly requests: readonly ServedRequest[]) {
    this.waits = new Float64Array(requests.length).fill(Number.NaN);
  }

  get running(): number {
    return this.ends.size();
  }

  /** Since when requests have waited without a break (the queue last went from empty to not); undefined: none wait. */
  get queueSince(): number | undefined {
    return this.since;
  }

  get waiting(): number {
    return this.queue.length - this.queueHead;
  }

  /** Starts what waits on the slots the ready replicas have free at `at` (replicas just became ready). */
  admit(at: number, ready: ReadySlots): void {
    this.startWaiting(at, ready);
  }

  /** Serves arrivals and completions in [from, until) on the ready replicas' slots. */
  advance(from: number, until: number, ready: ReadySlots): void {
    this.startWaiting(from, ready);
    for (;;) {
      const arrival = this.requests[this.next]?.at ?? Number.POSITIVE_INFINITY;
      const end = this.ends.peek()?.at ?? Number.POSITIVE_INFINITY;
      if (Math.min(arrival, end) >= until) return;
      if (end <= arrival) {
        const { replica } = this.ends.pop()!;
        this.onReplica.set(replica, this.onReplica.get(replica)! - 1);
        this.startWaiting(end, ready);
      } else {
        this.queue.push(this.next++);
        this.startWaiting(arrival, ready);
      }
    }
  }

  /** Waits of the requests still queued, as if they started at `at` (the run ends with them waiting). */
  closeAt(at: number): void {
    for (let i = this.queueHead; i < this.queue.length; i++) {
      const index = this.queue[i];
      this.waits[index] = at - this.requests[index].at;
    }
    for (let i = this.next; i < this.requests.length; i++) {
      if (this.requests[i].at < at) this.waits[i] = at - this.requests[i].at;
    }
  }

  /** The ready replica with the fewest in flight that has a free slot, or null. */
  private freeReplica(ready: ReadySlots): string | null {
    let best: string | null = null;
    let fewest = Number.POSITIVE_INFINITY;
    for (const [replica, slots] of ready) {
      const held = this.onReplica.get(replica) ?? 0;
      if (held < slots && held < fewest) {
        best = replica;
        fewest = held;
      }
    }
    return best;
  }

  private startWaiting(at: number, ready: ReadySlots): void {
    while (this.queueHead < this.queue.length) {
      const replica = this.freeReplica(ready);
      if (!replica) break;
      const index = this.queue[this.queueHead++];
      this.waits[index] = at - this.requests[index].at;
      this.onReplica.set(replica, (this.onReplica.get(replica) ?? 0) + 1);
      this.ends.push({ at: at + this.requests[index].serviceMs, seq: this.started++, replica });
    }
    if (this.waiting === 0) this.since = undefined;
    else this.since ??= at;
    if (this.queueHead > 4096 && this.queueHead * 2 > this.queue.length) {
      this.queue.splice(0, this.queueHead);
      this.queueHead = 0;
    }
  }
}
