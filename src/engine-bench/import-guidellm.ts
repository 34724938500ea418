import { z } from 'zod';
import type { Imported } from './imported.ts';
import { checkRecord } from './json-records.ts';
import type { Level } from './level.ts';

/** A DistributionSummary of GuideLLM (guidellm/schemas/statistics.py): mean, count, percentiles p001..p999. */
const Distribution = z.looseObject({
  mean: z.number(),
  count: z.number().optional(),
  percentiles: z.looseObject({ p95: z.number() }),
});
/** A StatusDistributionSummary: one distribution per request status; only successful requests count. */
const ByStatus = z.looseObject({ successful: Distribution });
const Totals = z.looseObject({ successful: z.number(), errored: z.number() });
const Strategy = z.looseObject({ type_: z.string(), streams: z.number().int().positive().optional() });

/**
 * The fields of one entry of `benchmarks` in GuideLLM's benchmarks.json that a level needs. Newer
 * versions keep the strategy in `config` and the request totals in `metrics`, older ones (0.2, 0.3) in
 * `args` and at the top.
 */
const GuidellmBenchmarkSchema = z.looseObject({
  config: z.looseObject({ strategy: Strategy }).optional(),
  args: z.looseObject({ strategy: Strategy }).optional(),
  request_totals: Totals.optional(),
  metrics: z.looseObject({
    request_totals: Totals.optional(),
    request_concurrency: ByStatus,
    request_latency: ByStatus,
    time_to_first_token_ms: ByStatus,
    inter_token_latency_ms: ByStatus,
    output_tokens_per_second: ByStatus,
  }),
});
const GuidellmReportSchema = z.looseObject({ benchmarks: z.array(z.unknown()).min(1) });

type GuidellmBenchmark = z.infer<typeof GuidellmBenchmarkSchema>;

/**
 * The requests in flight of a benchmark: the streams of a concurrent one, 1 for synchronous. Rate-based
 * strategies (constant, poisson, throughput) fix no concurrency, so the mean observed is taken, rounded
 * down: that is how many in flight the engine served while the benchmark met (or missed) its SLO.
 */
function concurrencyOf(benchmark: GuidellmBenchmark, where: string, warnings: string[]): number {
  const strategy = benchmark.config?.strategy ?? benchmark.args?.strategy;
  if (!strategy) throw new Error(`${where} has no config.strategy (nor args.strategy)`);
  if (strategy.type_ === 'synchronous') return 1;
  if (strategy.type_ === 'concurrent' && strategy.streams) return strategy.streams;
  const observed = Math.floor(benchmark.metrics.request_concurrency.successful.mean);
  warnings.push(`${where} (${strategy.type_}) fixes no concurrency; used the mean observed, ${observed}`);
  return observed;
}

/**
 * Levels from a GuideLLM report, one per benchmark. TPOT is GuideLLM's `inter_token_latency_ms`, the
 * mean time between tokens after the first (its `time_per_output_token_ms` spreads the time over every
 * token, the first included, which is not what vLLM and this benchmark call TPOT).
 */
export function levelsFromGuidellm(records: readonly unknown[], source: string): Imported {
  const warnings: string[] = [];
  const levels = records.flatMap((record, r) => {
    const report = checkRecord(
      GuidellmReportSchema,
      record,
      records.length > 1 ? `${source}: report ${r + 1}` : source,
    );
    return report.benchmarks.map((entry, i): Level => {
      const where = `${source}: benchmarks[${i}]`;
      const benchmark = checkRecord(GuidellmBenchmarkSchema, entry, where);
      const { metrics } = benchmark;
      const totals = metrics.request_totals ?? benchmark.request_totals;
      const successful = totals?.successful ?? metrics.time_to_first_token_ms.successful.count ?? 0;
      const failed = totals?.errored ?? 0;
      const p95 = (summary: z.infer<typeof ByStatus>, scale = 1) =>
        successful > 0 ? summary.successful.percentiles.p95 * scale : null;
      return {
        concurrency: concurrencyOf(benchmark, where, warnings),
        requests: successful + failed,
        failed,
        ttft_p95_ms: p95(metrics.time_to_first_token_ms),
        tpot_p95_ms: p95(metrics.inter_token_latency_ms),
        // request_latency is in seconds.
        e2e_p95_ms: p95(metrics.request_latency, 1000),
        tok_per_sec: metrics.output_tokens_per_second.successful.mean,
      };
    });
  });
  return { tool: 'guidellm', levels, warnings };
}
