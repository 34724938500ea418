import { prefillMs, type SimEngineModel, tpotMs } from './engine-model.ts';

export interface SimJob {
  promptTokens: number;
  maxTokens: number;
  onToken(index: number): void;
  onDone(): void;
}

interface Active {
  job: SimJob;
  emitted: number;
  /** When the next token is due (performance.now()). */
  due: number;
  timer?: NodeJS.Timeout;
}

/** A seeded uniform random number generator in [0, 1) (mulberry32): the same seed, the same jitter. */
function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * The simulated engine's continuous batch: up to maxBatch requests run, each getting a token every
 * TPOT(running) ms; the rest wait, first come first served, and take the next free slot.
 */
export class SimBatch {
  private readonly running = new Set<Active>();
  private readonly waiting: Active[] = [];
  private readonly random: () => number;

  constructor(
    private readonly model: SimEngineModel,
    seed: number,
  ) {
    this.random = seeded(seed);
  }

  get runningCount() {
    return this.running.size;
  }

  get waitingCount() {
    return this.waiting.length;
  }

  /** Queues a request; the answer cancels it (a client that went away frees its slot). */
  submit(job: SimJob): () => void {
    const active: Active = { job, emitted: 0, due: 0 };
    this.waiting.push(active);
    this.admit();
    return () => this.remove(active);
  }

  stopAll() {
    for (const active of [...this.running, ...this.waiting]) clearTimeout(active.timer);
    this.running.clear();
    this.waiting.length = 0;
  }

  private admit() {
    while (this.running.size < this.model.maxBatch && this.waiting.length > 0) {
      const active = this.waiting.shift()!;
      this.running.add(active);
      active.due = performance.now() + prefillMs(this.model, active.job.promptTokens) + this.interval();
      this.schedule(active);
    }
  }

  /**
   * Timers fire late by a millisecond or so; aiming each token at its due time, rather than at a delay
   * after the last one fired, keeps that lateness from adding up into the measured TPOT.
   */
  private schedule(active: Active) {
    active.timer = setTimeout(() => this.emit(active), Math.max(0, active.due - performance.now()));
  }

  private emit(active: Active) {
    active.job.onToken(active.emitted++);
    if (active.emitted >= active.job.maxTokens) {
      this.remove(active);
      active.job.onDone();
      return;
    }
    active.due += this.interval();
    this.schedule(active);
  }

  private interval() {
    const factor = 1 + this.model.jitter * (2 * this.random() - 1);
    return tpotMs(this.model, this.running.size) * factor;
  }

  private remove(active: Active) {
    clearTimeout(active.timer);
    const queued = this.waiting.indexOf(active);
    if (queued >= 0) this.waiting.splice(queued, 1);
    if (this.running.delete(active)) this.admit();
  }
}
