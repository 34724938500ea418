import { z } from 'zod';
import type { Imported } from './imported.ts';
import { checkRecord } from './json-records.ts';
import type { Level } from './level.ts';

/**
 * The fields of a `vllm bench serve --save-result` JSON (vllm/benchmarks/serve.py) that a level needs.
 * Percentiles are written as `p{N}_{metric}_ms` for the `--metric-percentiles` asked (default 99) of
 * the `--percentile-metrics` asked (default ttft,tpot,itl).
 */
const VllmResultSchema = z.looseObject({
  max_concurrency: z.number().int().positive().nullish(),
  completed: z.number().int().min(0),
  failed: z.number().int().min(0).optional(),
  output_throughput: z.number().min(0),
  p95_ttft_ms: z.number().optional(),
  p99_ttft_ms: z.number().optional(),
  p95_tpot_ms: z.number().optional(),
  p99_tpot_ms: z.number().optional(),
  p95_e2el_ms: z.number().optional(),
});

/**
 * Levels from `vllm bench serve` results, one per run at a `--max-concurrency`. Without p95s (the tool
 * writes p99 only unless `--metric-percentiles` asks for 95) the p99 is used: stricter, so a level that
 * meets the SLO with it meets it with the p95 too.
 */
export function levelsFromVllm(records: readonly unknown[], source: string): Imported {
  const usedP99 = new Set<string>();
  const levels = records.map((record, i): Level => {
    const where = `${source}: result ${i + 1}`;
    const result = checkRecord(VllmResultSchema, record, where);
    if (!result.max_concurrency) {
      throw new Error(`${where} has no max_concurrency; run vllm bench serve with --max-concurrency N`);
    }
    const p95 = (metric: 'ttft' | 'tpot') => {
      const value = result[`p95_${metric}_ms`] ?? result[`p99_${metric}_ms`];
      if (value === undefined) {
        throw new Error(
          `${where} has no p95_${metric}_ms; run vllm bench serve with --percentile-metrics ttft,tpot --metric-percentiles 95`,
        );
      }
      if (result[`p95_${metric}_ms`] === undefined) usedP99.add(metric.toUpperCase());
      return value;
    };
    const failed = result.failed ?? 0;
    return {
      concurrency: result.max_concurrency,
      requests: result.completed + failed,
      failed,
      ttft_p95_ms: p95('ttft'),
      tpot_p95_ms: p95('tpot'),
      e2e_p95_ms: result.p95_e2el_ms ?? null,
      tok_per_sec: result.output_throughput,
    };
  });
  const warnings = usedP99.size
    ? [
        `${source} has no p95 of ${[...usedP99].join(' and ')}; used its p99, which is stricter (--metric-percentiles 95 gives p95)`,
      ]
    : [];
  return { tool: 'vllm bench serve', levels, warnings };
}
