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
  /** The last time to ready observed for one of its replicas (ms). */
  readyMs?: number;
}
