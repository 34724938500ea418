import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { highestMeeting, type Level, missReason, summarizeLevel } from '../../../src/engine-bench/level.ts';
import { measurementOf } from '../../../src/engine-bench/measurement.ts';
import { percentile } from '../../../src/engine-bench/percentile.ts';
import { runLevel } from '../../../src/engine-bench/run-bench.ts';
import { findKnee } from '../../../src/engine-bench/search.ts';

const level = (concurrency: number, ttft: number, tpot: number, extra: Partial<Level> = {}): Level => ({
  concurrency,
  requests: 8,
  failed: 0,
  ttft_p95_ms: ttft,
  tpot_p95_ms: tpot,
  e2e_p95_ms: null,
  tok_per_sec: concurrency * 100,
  ...extra,
});

const slo = { ttft_p95_ms: 100, tpot_p95_ms: 20 };

describe('percentile', () => {
  it('interpolates between the closest ranks, as numpy (and so vllm bench serve) does', () => {
    assert.equal(percentile([], 95), undefined);
    assert.equal(percentile([7], 95), 7);
    assert.equal(percentile([1, 2, 3, 4, 5], 50), 3);
    // rank 0.95 * 4 = 3.8: between 4 and 5.
    assert.equal(percentile([5, 1, 4, 2, 3], 95), 4.8);
    assert.equal(percentile([10, 20], 100), 20);
    assert.equal(percentile([10, 20], 0), 10);
  });
});

describe('a level and the SLO', () => {
  it('summarizes its requests: p95s of the successful ones, failures counted, throughput over the wall time', () => {
    const summary = summarizeLevel(
      2,
      [
        { ok: true, ttftMs: 10, tpotMs: 2, e2eMs: 40, outputTokens: 16 },
        { ok: true, ttftMs: 20, tpotMs: 4, e2eMs: 80, outputTokens: 16 },
        { ok: false, error: 'timed out after 10 ms' },
      ],
      500,
    );
    assert.equal(summary.requests, 3);
    assert.equal(summary.failed, 1);
    assert.equal(summary.ttft_p95_ms, 19.5);
    assert.equal(summary.tpot_p95_ms, 3.9);
    assert.equal(summary.tok_per_sec, 64);
  });

  it('misses on a failed request, on a p95 above its bound, and on a p95 it needs but could not measure', () => {
    assert.equal(missReason(level(1, 50, 10), slo), null);
    assert.equal(missReason(level(1, 50, 10, { failed: 1 }), slo), '1 of 8 requests failed');
    assert.equal(missReason(level(1, 150, 10), slo), 'TTFT p95 150.0 ms > 100 ms');
    assert.equal(missReason(level(1, 50, 25), slo), 'TPOT p95 25.0 ms > 20 ms');
    assert.equal(
      missReason(level(1, 50, 25), { ttft_p95_ms: 100 }),
      null,
      'an SLO without TPOT does not check it',
    );
    assert.equal(missReason(level(1, 50, 0, { tpot_p95_ms: null }), slo), 'no TPOT measured');
  });

  it('the answer is the highest level meeting the SLO with every lower one meeting it', () => {
    const levels = [level(4, 50, 30), level(1, 50, 10), level(2, 50, 12), level(8, 50, 15)];
    assert.equal(highestMeeting(levels, slo)?.concurrency, 2, 'a lucky 8 above a missing 4 does not count');
    assert.equal(highestMeeting([level(1, 500, 10)], slo), null);
  });

  it('the measurement keeps the levels that measured both p95s and answers 0 when nothing meets the SLO', () => {
    const allFailed = level(2, 0, 0, { failed: 8, ttft_p95_ms: null, tpot_p95_ms: null });
    const met = measurementOf({ model: 'm', profile: 'p', tool: 't' }, slo, [level(1, 50, 10), allFailed]);
    assert.equal(met.max_concurrency_at_slo, 1);
    assert.equal(met.throughput_tok_per_sec, 100);
    assert.deepEqual(met.points, [{ concurrency: 1, ttft_p95_ms: 50, tpot_p95_ms: 10, tok_per_sec: 100 }]);
    const none = measurementOf({ model: 'm', profile: 'p', tool: 't' }, slo, [level(1, 500, 10)]);
    assert.equal(none.max_concurrency_at_slo, 0);
    assert.equal(none.throughput_tok_per_sec, 0);
  });
});

/** A fake engine whose TPOT is 2 ms per request in flight: it meets a TPOT bound of B up to floor(B / 2). */
const fakeMeasure = (tried: number[]) => async (concurrency: number) => {
  tried.push(concurrency);
  return level(concurrency, 10, 2 * concurrency);
};

describe('the search over levels', () => {
  it('doubles until a level misses, then bisects to the exact knee', async () => {
    for (const knee of [1, 2, 3, 5, 6, 7, 8, 9, 12, 100]) {
      const tried: number[] = [];
      const result = await findKnee(fakeMeasure(tried), { tpot_p95_ms: 2 * knee + 1 }, 256);
      assert.equal(result.best?.concurrency, knee, `knee ${knee}, tried ${tried.join(',')}`);
      assert.equal(result.capped, false);
      assert.ok(
        tried.length <= 2 * Math.ceil(Math.log2(knee + 1)) + 1,
        `few levels for ${knee}: ${tried.join(',')}`,
      );
    }
  });

  it('tries the levels in the order doubling then bisecting gives', async () => {
    const tried: number[] = [];
    await findKnee(fakeMeasure(tried), { tpot_p95_ms: 11 }, 256);
    assert.deepEqual(tried, [1, 2, 4, 8, 6, 5]);
  });

  it('answers null after one level when even one request at a time misses', async () => {
    const tried: number[] = [];
    const result = await findKnee(fakeMeasure(tried), { tpot_p95_ms: 1 }, 256);
    assert.equal(result.best, null);
    assert.deepEqual(tried, [1]);
  });

  it('stops at the cap, trying the cap itself, and says the answer is capped', async () => {
    const tried: number[] = [];
    const result = await findKnee(fakeMeasure(tried), { tpot_p95_ms: 1000 }, 12);
    assert.deepEqual(tried, [1, 2, 4, 8, 12]);
    assert.equal(result.best?.concurrency, 12);
    assert.equal(result.capped, true);
  });

  it('reports each level as it is measured', async () => {
    const seen: number[] = [];
    await findKnee(fakeMeasure([]), { tpot_p95_ms: 7 }, 256, (l) => seen.push(l.concurrency));
    assert.deepEqual(seen, [1, 2, 4, 3]);
  });
});

describe('a level run', () => {
  it('keeps exactly `concurrency` requests in flight until `total` have been sent', async () => {
    let inFlight = 0;
    let most = 0;
    const sent: number[] = [];
    const result = await runLevel(3, 10, async (request) => {
      sent.push(request);
      most = Math.max(most, ++inFlight);
      await new Promise((resolve) => setTimeout(resolve, 5));
      inFlight--;
      return { ok: true, ttftMs: 1, tpotMs: 1, e2eMs: 5, outputTokens: 4 };
    });
    assert.equal(most, 3);
    assert.deepEqual(
      sent.sort((a, b) => a - b),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );
    assert.equal(result.requests, 10);
    assert.equal(result.concurrency, 3);
  });
});
