/**
 * What a model's reconciler learns from its own load, pass after pass (policy/load-growth.ts). Small and
 * bounded: it travels in the workflow's state.
 */
export interface GrowthMemory {
  /** Loads seen within the last start delay, [at, in flight], each lower than every later one. */
  lows: [number, number][];
  /** The rises seen in the memory's span: at, by how much the load grew within one start delay, to what. */
  rises: { at: number; growth: number; top: number; withinMs: number }[];
  /** Replicas seen pending or starting by the last pass: id -> created_at (their time to ready is observed). */
  settling: Record<string, number>;
  /**
   * When the last pass was, if the load it saw had requests waiting for a slot (ms): a queue that goes
   * on piling up is not a rise, and one that began after that pass is a new one.
   */
  queuedAt?: number;
  /** The last time to ready observed for one of its replicas (ms). */
  readyMs?: number;
}

/** Why spare room is kept (policy/load-growth.ts), as a code a decision's inputs carry and its sentence renders. */
export interface BurstHeadroom {
  code: 'burst_headroom';
  /** Requests in flight to keep room for beyond the load. */
  spare: number;
  /** The rise that asks for it, as seen. */
  growth: number;
  within_ms: number;
  ago_ms: number;
}

/** Why a spare replica is added while a burst outruns the ready replicas (policy/load-growth.ts). */
export interface RisingBurst {
  code: 'rising_burst';
  /** What the load grew by within one start delay, up to this pass. */
  growth: number;
  within_ms: number;
  /** In flight the ready replicas serve at SLO. */
  ready: number;
}
