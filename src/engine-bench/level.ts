import { percentile } from './percentile.ts';

/** What the service level objective asks of the p95 of a level; an absent one is not checked. */
export interface Slo {
  ttft_p95_ms?: number;
  tpot_p95_ms?: number;
}

/**
 * One concurrency level, measured (by `llmgw ctl bench`) or read from another tool's result. A p95 is
 * null when no request of the level produced it.
 */
export interface Level {
  concurrency: number;
  requests: number;
  failed: number;
  /**
   * Of the failed requests, those that never reached the endpoint (refused, or their connection closed
   * before any answer even on a new one): reported apart, since they say nothing of the engine's speed.
   * Absent in results read from other tools.
   */
  connection_errors?: number;
  /** A few of the failures' messages, distinct, so that a failing level says why. */
  errors?: string[];
  ttft_p95_ms: number | null;
  tpot_p95_ms: number | null;
  e2e_p95_ms: number | null;
  tok_per_sec: number;
}

/** One request as the benchmark saw it. */
export type RequestSample =
  | { ok: true; ttftMs: number; tpotMs: number | null; e2eMs: number; outputTokens: number }
  | { ok: false; error: string; connection?: boolean };

/** A level's figures from its requests; throughput is the output tokens of the level over its wall time. */
export function summarizeLevel(
  concurrency: number,
  samples: readonly RequestSample[],
  wallMs: number,
): Level {
  const ok = samples.filter((sample) => sample.ok);
  const p95 = (values: (number | null)[]) =>
    percentile(
      values.filter((value): value is number => value !== null),
      95,
    ) ?? null;
  const tokens = ok.reduce((total, sample) => total + sample.outputTokens, 0);
  const failures = samples.filter((sample) => !sample.ok);
  return {
    concurrency,
    requests: samples.length,
    failed: failures.length,
    connection_errors: failures.filter((sample) => sample.connection).length,
    errors: [...new Set(failures.map((sample) => sample.error))].slice(0, 3),
    ttft_p95_ms: p95(ok.map((sample) => sample.ttftMs)),
    tpot_p95_ms: p95(ok.map((sample) => sample.tpotMs)),
    e2e_p95_ms: p95(ok.map((sample) => sample.e2eMs)),
    tok_per_sec: wallMs > 0 ? (tokens * 1000) / wallMs : 0,
  };
}

/**
 * Why a level misses the SLO, or null when it meets it. A failed request is a miss (an engine that
 * errors or times out under a load does not serve that load), and so is a p95 the SLO sets but the
 * level could not measure. Requests that never reached the endpoint are said apart: they leave the level
 * unmeasured rather than slow.
 */
export function missReason(level: Level, slo: Slo): string | null {
  const unreached = level.connection_errors ?? 0;
  if (level.failed > unreached) return `${level.failed - unreached} of ${level.requests} requests failed`;
  if (unreached > 0) return `${unreached} of ${level.requests} requests could not reach the endpoint`;
  const over = (name: string, value: number | null, bound: number | undefined) => {
    if (bound === undefined) return null;
    if (value === null) return `no ${name} measured`;
    return value > bound ? `${name} p95 ${value.toFixed(1)} ms > ${bound} ms` : null;
  };
  return over('TTFT', level.ttft_p95_ms, slo.ttft_p95_ms) ?? over('TPOT', level.tpot_p95_ms, slo.tpot_p95_ms);
}

export const meetsSlo = (level: Level, slo: Slo) => missReason(level, slo) === null;

/**
 * The highest level that meets the SLO with every lower level meeting it too, or null when the lowest
 * misses. Counting only up to the first miss keeps a lucky level above a failing one from being taken
 * as the answer: capacity at SLO is what holds at every load up to it.
 */
export function highestMeeting(levels: readonly Level[], slo: Slo): Level | null {
  let best: Level | null = null;
  for (const level of [...levels].sort((a, b) => a.concurrency - b.concurrency)) {
    if (!meetsSlo(level, slo)) break;
    best = level;
  }
  return best;
}
