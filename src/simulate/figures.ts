import type { RunResult } from './run.ts';

/** What the issue asks of each policy and model. */
export interface PolicyFigures {
  policy: string;
  model: string;
  /** Share of ticks at which no request waits: the ready replicas' slots cover what is in flight on them. */
  covered: number;
  p50WaitMs: number;
  p99WaitMs: number;
  gpuHours: number;
  /** Replicas started (churn). */
  started: number;
  /** The most requests waiting for a slot at any tick. */
  largestShortfall: number;
  /** Its replicas that another model took: reclaimed for a guarantee or preempted (llmgw alone does). */
  takenAway: number;
}

/** Nearest-rank percentile of sorted values (the engine bench interpolates instead, as numpy does). */
export function nearestRank(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export function figuresOf(run: RunResult): PolicyFigures[] {
  return [...run.series].map(([model, series]) => {
    let covered = 0;
    let shortfall = 0;
    for (const waiting of series.waiting) {
      if (waiting === 0) covered++;
      shortfall = Math.max(shortfall, waiting);
    }
    const waits = run.pools
      .get(model)!
      .waits.filter((w) => !Number.isNaN(w))
      .sort();
    return {
      policy: run.policy,
      model,
      covered: covered / series.waiting.length,
      p50WaitMs: nearestRank(waits, 0.5),
      p99WaitMs: nearestRank(waits, 0.99),
      gpuHours: (run.cluster.gpuMs.get(model) ?? 0) / 3_600_000,
      started: run.cluster.starts.filter((s) => s.model === model).length,
      largestShortfall: shortfall,
      takenAway: run.cluster.drains.filter((d) => d.model === model && d.takenBy !== undefined).length,
    };
  });
}
