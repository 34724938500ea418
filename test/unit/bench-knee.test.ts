import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type SimEngineOptions, simKnee, startSimEngine } from '../../src/cluster/sim/engine.ts';
import { type BenchOptions, benchEndpoint } from '../../src/engine-bench/run-bench.ts';

const PROMPT_TOKENS = 64;

/** Benchmarks a fresh simulated engine; small token times and 16 tokens keep each engine to a few seconds. */
async function benchSim(
  engine: SimEngineOptions,
  slo: BenchOptions['slo'],
  options: Partial<BenchOptions> = {},
) {
  const sim = await startSimEngine(engine);
  try {
    const result = await benchEndpoint({
      target: { url: `${sim.url}/v1`, model: 'sim', timeoutMs: 10_000 },
      slo,
      promptTokens: PROMPT_TOKENS,
      maxTokens: 16,
      maxConcurrency: 256,
      ...options,
    });
    const found = result.best?.concurrency ?? 0;
    const known = simKnee(engine, slo, PROMPT_TOKENS);
    console.info(
      `knee: true ${known}, found ${found} (levels ${result.levels.map((l) => l.concurrency).join(', ')})`,
    );
    return { result, found, known };
  } finally {
    await sim.stop();
  }
}

/*
 * The machine running the tests may be busy: timers fire milliseconds late and a p95 of TTFT jumps by
 * tens of milliseconds. A busy machine only ever makes tokens late, never early, so TPOT bounds sit
 * nearer the TPOT of the level above the knee than the knee's own; TTFT bounds sit far from any level's;
 * and the answer may be one level off ("within one bisection step").
 * The first engine is measured with the default requests per level; the others with fewer (and the last
 * with fewer tokens) to keep the run short: a p95 over fewer requests moves no nearer to any bound.
 */
describe('bench finds the knee of an engine of known capacity', () => {
  it('where time per token binds: TPOT(c) = 2 + 2 (c - 1) ms, SLO 13.5 ms -> 6', async () => {
    const { result, found, known } = await benchSim(
      { maxBatch: 64, baseTpotMs: 2, tpotGrowthMs: 2, jitter: 0.1, seed: 1 },
      { ttft_p95_ms: 500, tpot_p95_ms: 13.5 },
    );
    assert.equal(known, 6);
    assert.ok(Math.abs(found - known) <= 1, `found ${found}, true ${known}`);
    assert.equal(result.capped, false);
    assert.ok((result.best?.tok_per_sec ?? 0) > 0);
  });

  it('where time per token binds more steeply: TPOT(c) = 2 + 4 (c - 1) ms, SLO 21 ms -> 5', async () => {
    const { found, known } = await benchSim(
      { maxBatch: 64, baseTpotMs: 2, tpotGrowthMs: 4, jitter: 0.1, seed: 2 },
      { ttft_p95_ms: 500, tpot_p95_ms: 21 },
      { requestsPerLevel: 4 },
    );
    assert.equal(known, 5);
    assert.ok(Math.abs(found - known) <= 1, `found ${found}, true ${known}`);
  });

  it('where the batch binds: beyond 4 requests queue for a slot and their TTFT breaks the SLO -> 4', async () => {
    // TTFT(4) = TPOT(4) = 24 ms; a queued request waits about a request's time, 16 x 24 ms, over 4.
    const { found, known } = await benchSim(
      { maxBatch: 4, baseTpotMs: 6, tpotGrowthMs: 6, jitter: 0.1, seed: 3 },
      { ttft_p95_ms: 100, tpot_p95_ms: 100 },
      { requestsPerLevel: 4 },
    );
    assert.equal(known, 4);
    assert.ok(Math.abs(found - known) <= 1, `found ${found}, true ${known}`);
  });

  it('an engine that never meets the SLO gives 0 after one level, not a crash', async () => {
    const { result, found, known } = await benchSim(
      { maxBatch: 64, baseTpotMs: 10, tpotGrowthMs: 1, jitter: 0.1, seed: 4 },
      { ttft_p95_ms: 500, tpot_p95_ms: 5 },
      { requestsPerLevel: 2, maxTokens: 4 },
    );
    assert.equal(known, 0);
    assert.equal(found, 0);
    assert.equal(result.best, null);
    assert.deepEqual(
      result.levels.map((l) => l.concurrency),
      [1],
    );
  });

  it('an endpoint that does not answer is an error, not a knee of 0', async () => {
    const sim = await startSimEngine({ maxBatch: 1, baseTpotMs: 1, tpotGrowthMs: 0, jitter: 0, seed: 5 });
    await sim.stop();
    await assert.rejects(
      benchEndpoint({
        target: { url: `${sim.url}/v1`, model: 'sim', timeoutMs: 2000 },
        slo: { tpot_p95_ms: 10 },
        promptTokens: 8,
        maxTokens: 4,
        maxConcurrency: 4,
      }),
      /did not answer a first request: .*ECONNREFUSED/,
    );
  });
});
