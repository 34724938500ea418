import { type Level, missReason, type Slo } from '../../engine-bench/level.ts';
import type { MeasurementBody } from '../../engine-bench/measurement.ts';
import type { Context, Input, OptionSpec } from './command.ts';
import { Failed, UsageError } from './errors.ts';
import { sloText } from './measurements.ts';
import { numberOption } from './options.ts';
import { num, table } from './output.ts';

/** What `bench` and `bench import` both take: what the measurement is of, and the SLO. */
export const MEASUREMENT_OPTIONS: Record<string, OptionSpec> = {
  model: { type: 'string', value: 'M', description: 'the llmgw model measured', required: true },
  profile: { type: 'string', value: 'P', description: 'its profile measured', required: true },
  'slo-ttft-p95-ms': { type: 'string', value: 'MS', description: 'p95 time to first token the SLO allows' },
  'slo-tpot-p95-ms': {
    type: 'string',
    value: 'MS',
    description: 'p95 time per output token (after the first) the SLO allows',
  },
};

export function sloOf(input: Input): Slo {
  const ttft = numberOption(input, 'slo-ttft-p95-ms', { positive: true });
  const tpot = numberOption(input, 'slo-tpot-p95-ms', { positive: true });
  if (ttft === undefined && tpot === undefined)
    throw new UsageError('give --slo-ttft-p95-ms, --slo-tpot-p95-ms or both');
  return {
    ...(ttft === undefined ? {} : { ttft_p95_ms: ttft }),
    ...(tpot === undefined ? {} : { tpot_p95_ms: tpot }),
  };
}

/** One line per level as it is measured (stderr), so a long bench shows that it moves. */
export function levelLine(level: Level, slo: Slo): string {
  const miss = missReason(level, slo);
  return (
    `concurrency ${level.concurrency}: TTFT p95 ${num(level.ttft_p95_ms)} ms, TPOT p95 ${num(level.tpot_p95_ms)} ms, ` +
    `${num(level.tok_per_sec, 0)} tokens/s, ${level.requests} requests -> ${miss ? `misses (${miss})` : 'meets the SLO'}` +
    (level.errors?.length ? `; errors: ${level.errors.join('; ')}` : '')
  );
}

function resultText(
  measurement: MeasurementBody,
  levels: readonly Level[],
  capped: boolean,
  stored: boolean,
): string {
  const slo = measurement.slo;
  const rows = [...levels]
    .sort((a, b) => a.concurrency - b.concurrency)
    .map((l) => [
      l.concurrency,
      l.requests,
      l.failed,
      num(l.ttft_p95_ms),
      num(l.tpot_p95_ms),
      num(l.e2e_p95_ms),
      num(l.tok_per_sec, 0),
      missReason(l, slo) ?? 'meets',
    ]);
  const best = measurement.max_concurrency_at_slo;
  const answer =
    best === 0
      ? `no concurrency meets the SLO (${sloText(slo)}): 0`
      : `max concurrency at SLO (${sloText(slo)}): ${best}${capped ? ' (the cap: raise --max-concurrency to look further)' : ''}, ` +
        `at ${num(measurement.throughput_tok_per_sec, 0)} tokens/s`;
  return [
    table(
      [
        'CONCURRENCY',
        'REQUESTS',
        'FAILED',
        'TTFT_P95_MS',
        'TPOT_P95_MS',
        'E2E_P95_MS',
        'TOKENS_PER_SEC',
        'SLO',
      ],
      rows,
    ),
    '',
    answer,
    ...(stored ? [`stored as the measurement of ${measurement.model}/${measurement.profile}`] : []),
  ].join('\n');
}

/**
 * Stores the measurement (when asked) and prints it with its levels. The result is printed even when
 * the server refuses it, so that a long bench is not lost; the refusal still ends the command with 1.
 * A bench where no level met the SLO is not sent: a capacity of 0 is no measurement, and the API
 * refuses it.
 */
export async function reportMeasurement(
  ctx: Context,
  measurement: MeasurementBody,
  levels: readonly Level[],
  options: { store: boolean; capped?: boolean },
) {
  let refusal: unknown;
  if (options.store && measurement.max_concurrency_at_slo === 0) {
    refusal = new Failed(
      `no level met the SLO, so nothing was stored as the measurement of ${measurement.model}/${measurement.profile}`,
    );
  } else if (options.store) {
    try {
      await ctx.api().call('PUT', '/measurements', measurement);
    } catch (error) {
      refusal = error;
    }
  }
  const stored = options.store && refusal === undefined;
  const capped = options.capped ?? false;
  ctx.out.show({ ...measurement, capped, stored, levels }, () =>
    resultText(measurement, levels, capped, stored),
  );
  if (refusal) throw refusal;
}
