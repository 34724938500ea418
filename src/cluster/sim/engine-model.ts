/**
 * How the simulated engine's speed depends on its load: the figures a test needs to know what a
 * benchmark of it should find.
 */
export interface SimEngineModel {
  /** Requests served at once; more wait in a queue for a free slot (vLLM's max_num_seqs). */
  maxBatch: number;
  /** Time between two tokens of a request served alone. */
  baseTpotMs: number;
  /** What each further request served at once adds to every request's time between tokens. */
  tpotGrowthMs: number;
  /** Prefill time per prompt token, spent once a request has its slot, before its first token. */
  prefillMsPerToken?: number;
  /** Each token's time is scaled by a uniform random factor in [1 - jitter, 1 + jitter]. */
  jitter: number;
}

/** The time between tokens of every running request while `running` requests run at once. */
export const tpotMs = (model: SimEngineModel, running: number) =>
  model.baseTpotMs + model.tpotGrowthMs * Math.max(running - 1, 0);

export const prefillMs = (model: SimEngineModel, promptTokens: number) =>
  (model.prefillMsPerToken ?? 0) * promptTokens;

/**
 * The engine's true knee: the highest concurrency c a closed-loop benchmark (c requests in flight at
 * all times) finds within the SLO, 0 when even one request alone misses it.
 *
 * For c <= maxBatch nothing queues and every request runs with about c others, so
 *   TPOT(c) = baseTpotMs + tpotGrowthMs * (c - 1)
 *   TTFT(c) = prefillMsPerToken * promptTokens + TPOT(c)
 * and c meets the SLO when TPOT(c) <= slo.tpot and TTFT(c) <= slo.ttft. Jitter averages out over a
 * request's tokens (the mean of n factors), so keep the SLO a jitter's width away from TPOT(c).
 *
 * For c > maxBatch, c - maxBatch requests queue and each waits for running ones to finish: about
 * (c - maxBatch) / maxBatch of a request's time D = prefill + maxTokens * TPOT(maxBatch), added to its
 * TTFT. The knee is then maxBatch at most whenever slo.ttft < TTFT(maxBatch) + D / maxBatch, which is
 * what this function assumes (it never answers above maxBatch).
 */
export function simKnee(
  model: SimEngineModel,
  slo: { ttft_p95_ms?: number; tpot_p95_ms?: number },
  promptTokens: number,
): number {
  let knee = 0;
  for (let c = 1; c <= model.maxBatch; c++) {
    const tpot = tpotMs(model, c);
    const ttft = prefillMs(model, promptTokens) + tpot;
    if (tpot > (slo.tpot_p95_ms ?? Infinity) || ttft > (slo.ttft_p95_ms ?? Infinity)) break;
    knee = c;
  }
  return knee;
}
