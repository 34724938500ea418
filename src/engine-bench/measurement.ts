import { highestMeeting, type Level, type Slo } from './level.ts';

/** The body of `PUT /api/v1/measurements` (API.md, "Measurements"). */
export interface MeasurementBody {
  model: string;
  profile: string;
  max_concurrency_at_slo: number;
  throughput_tok_per_sec: number;
  slo: Slo;
  points: { concurrency: number; ttft_p95_ms: number; tpot_p95_ms: number; tok_per_sec: number }[];
  tool: string;
}

const round = (value: number) => Math.round(value * 1000) / 1000;

/**
 * The measurement of a model/profile from its levels: the highest concurrency that met the SLO and the
 * throughput there (0 and 0 when none did). Points are the levels that measured both p95s; a level whose
 * every request failed has none to give.
 */
export function measurementOf(
  target: { model: string; profile: string; tool: string },
  slo: Slo,
  levels: readonly Level[],
): MeasurementBody {
  const best = highestMeeting(levels, slo);
  const points = [...levels]
    .sort((a, b) => a.concurrency - b.concurrency)
    .flatMap(({ concurrency, ttft_p95_ms, tpot_p95_ms, tok_per_sec }) =>
      ttft_p95_ms === null || tpot_p95_ms === null
        ? []
        : [
            {
              concurrency,
              ttft_p95_ms: round(ttft_p95_ms),
              tpot_p95_ms: round(tpot_p95_ms),
              tok_per_sec: round(tok_per_sec),
            },
          ],
    );
  return {
    ...target,
    max_concurrency_at_slo: best?.concurrency ?? 0,
    throughput_tok_per_sec: best ? round(best.tok_per_sec) : 0,
    slo,
    points,
  };
}
