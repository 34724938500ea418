import type { RunResult } from './run.ts';

/** What the issue asks of each policy and model. */
export interface PolicyFigures {
  policy: string;
  model: string;
  /** Share of ticks at which the ready replicas' slots cover the requests in flight. */
  covered: number;
  p50WaitMs: number;
  p99WaitMs: number;
  gpuHours: number;
  /** Replicas started (churn). */
  started: number;
  /** The most requests in flight beyond the ready slots at any tick. */
  largestShortfall: number;
  requests: number;
}

/** Nearest-rank percentile of sorted values. */
export function percentile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export function figuresOf(run: RunResult): PolicyFigures[] {
  return [...run.series].map(([model, series]) => {
    let covered = 0;
    let shortfall = 0;
    for (let i = 0; i < series.load.length; i++) {
      const short = series.load[i] - series.capacity[i];
      if (short <= 0) covered++;
      shortfall = Math.max(shortfall, short);
    }
    const waits = run.pools
      .get(model)!
      .waits.filter((w) => !Number.isNaN(w))
      .sort();
    return {
      policy: run.policy,
      model,
      covered: covered / series.load.length,
      p50WaitMs: percentile(waits, 0.5),
      p99WaitMs: percentile(waits, 0.99),
      gpuHours: (run.cluster.gpuMs.get(model) ?? 0) / 3_600_000,
      started: run.cluster.starts.filter((s) => s.model === model).length,
      largestShortfall: shortfall,
      requests: waits.length,
    };
  });
}
