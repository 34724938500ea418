import type { Model } from '../domain/model.ts';
import type { TraceRequest } from './azure-trace.ts';
import type { Scenario } from './scenario.ts';
import type { ServedRequest } from './serving-pool.ts';

/**
 * How long each request holds a slot: prefill of its context tokens, then its generated tokens one
 * decode step each, at the rate its model's first measured profile reached at its concurrency at SLO
 * (throughput / concurrency tokens per second for one request). Every policy serves at this rate.
 */
export function servedRequests(
  scenario: Scenario,
  model: Model,
  trace: readonly TraceRequest[],
): ServedRequest[] {
  const measurement = model.profiles
    .map((p) => scenario.measurements.find((m) => m.model === model.name && m.profile === p.name))
    .find((m) => m !== undefined);
  if (!measurement) throw new Error(`model ${model.name} has no measured profile`);
  const prefill = scenario.prefillTokPerSec.get(`${model.name}/${measurement.profile}`)!;
  const decodeMsPerToken = (1000 * measurement.max_concurrency_at_slo) / measurement.throughput_tok_per_sec;
  return trace.map((r) => ({
    at: r.at,
    serviceMs: (1000 * r.contextTokens) / prefill + r.generatedTokens * decodeMsPerToken,
  }));
}
