import { MinHeap } from './min-heap.ts';

/** A request as the simulator serves it: when it arrives and how long it holds a slot. */
export interface ServedRequest {
  /** Milliseconds since the epoch. */
  at: number;
  serviceMs: number;
}

/**
 * The slots of one model's ready replicas, and the requests that hold them or wait for one (FIFO).
 * Slots change only between calls to `advance`; when they drop below what runs (a replica began to
 * drain), its requests finish where they run and no new one starts until a slot is free.
 */
export class ServingPool {
  private readonly ends = new MinHeap();
  private readonly queue: number[] = [];
  private queueHead = 0;
  private next = 0;
  /** Queueing delay of each request that started, by index; NaN while it has not. */
  readonly waits: Float64Array;

  constructor(private readonly requests: readonly ServedRequest[]) {
    this.waits = new Float64Array(requests.length).fill(Number.NaN);
  }

  get running(): number {
    return this.ends.size;
  }

  get waiting(): number {
    return this.queue.length - this.queueHead;
  }

  /** Serves arrivals and completions in [from, until) with `slots` slots. */
  advance(from: number, until: number, slots: number): void {
    this.startWaiting(from, slots);
    for (;;) {
      const arrival = this.requests[this.next]?.at ?? Number.POSITIVE_INFINITY;
      const end = this.ends.peek() ?? Number.POSITIVE_INFINITY;
      if (Math.min(arrival, end) >= until) return;
      if (end <= arrival) {
        this.ends.pop();
        this.startWaiting(end, slots);
      } else {
        this.queue.push(this.next++);
        this.startWaiting(arrival, slots);
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

  private startWaiting(at: number, slots: number): void {
    while (this.queueHead < this.queue.length && this.ends.size < slots) {
      const index = this.queue[this.queueHead++];
      const request = this.requests[index];
      this.waits[index] = at - request.at;
      this.ends.push(at + request.serviceMs);
    }
    if (this.queueHead > 4096 && this.queueHead * 2 > this.queue.length) {
      this.queue.splice(0, this.queueHead);
      this.queueHead = 0;
    }
  }
}
