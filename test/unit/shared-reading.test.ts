// The state figures of GET /metrics are read at most every few seconds for all scrapers
// (src/shared-reading.ts): one read at a time, waited for by whoever comes meanwhile.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_POLICY_SETTINGS } from '../../src/domain/snapshot.ts';
import { apiMetrics } from '../../src/metrics/api-metrics.ts';
import { createMetrics } from '../../src/metrics/registry.ts';
import { sharedReading } from '../../src/shared-reading.ts';
import type { Sql } from '../../src/store/db.ts';

/** A read that counts itself and resolves (or rejects) when the test says. */
function controlledRead() {
  const pending: { resolve: (value: number) => void; reject: (error: Error) => void }[] = [];
  return {
    pending,
    read: () => new Promise<number>((resolve, reject) => pending.push({ resolve, reject })),
  };
}

/** A shared reading over a controlled read, on a clock the test sets (`clock.at`). */
function controlledReading(maxAgeMs = 5000) {
  const { pending, read } = controlledRead();
  const clock = { at: 0 };
  return { pending, clock, reading: sharedReading(read, maxAgeMs, () => clock.at) };
}

describe('a shared reading', () => {
  it('is read once for the callers that come while it runs, and kept for maxAgeMs', async () => {
    const { pending, clock, reading } = controlledReading();
    const waiting = [reading(), reading(), reading()];
    assert.equal(pending.length, 1, 'one read in flight');
    pending[0].resolve(7);
    assert.deepEqual(await Promise.all(waiting), [7, 7, 7]);
    clock.at = 4999;
    assert.equal(await reading(), 7);
    assert.equal(pending.length, 1, 'kept while younger than maxAgeMs');
    clock.at = 5000;
    const next = reading();
    assert.equal(pending.length, 2, 'read again once as old as maxAgeMs');
    pending[1].resolve(8);
    assert.equal(await next, 8);
  });

  it('does not keep a failed read: its callers get the error, the next caller reads again', async () => {
    const { pending, reading } = controlledReading(60_000);
    const failed = [reading(), reading()];
    pending[0].reject(new Error('store down'));
    for (const call of failed) await assert.rejects(call, /store down/);
    const retried = reading();
    assert.equal(pending.length, 2);
    pending[1].resolve(1);
    assert.equal(await retried, 1);
  });

  it('gives a caller that knows of a change a read begun after it, kept or under way', async () => {
    const { pending, clock, reading } = controlledReading();
    const first = reading();
    clock.at = 10;
    const afterChange = reading(10);
    const alsoAfter = reading(10);
    assert.equal(pending.length, 1, 'one read at a time: the next one waits for the read under way');
    pending[0].resolve(1);
    assert.equal(await first, 1);
    await new Promise(setImmediate);
    assert.equal(pending.length, 2, 'the read under way began before the change: one more begins after it');
    const joined = reading(5);
    assert.equal(pending.length, 2, 'a read begun after the change is joined');
    pending[1].resolve(2);
    assert.deepEqual(await Promise.all([afterChange, alsoAfter, joined]), [2, 2, 2]);
    clock.at = 20;
    assert.equal(await reading(10), 2, 'the kept read began at the change: it will do');
    const newer = reading(11);
    assert.equal(pending.length, 3, 'the kept read is older than the change');
    pending[2].resolve(3);
    assert.equal(await newer, 3);
  });

  it('shares one read among callers that come one after another while a read runs', async () => {
    const { pending, clock, reading } = controlledReading();
    const callers = [reading(0)];
    for (clock.at = 1; clock.at <= 40; clock.at++) callers.push(reading(clock.at));
    assert.equal(pending.length, 1, 'forty callers, each told of a later change, while one read runs');
    pending[0].resolve(0);
    await new Promise(setImmediate);
    assert.equal(pending.length, 2, 'they share the next read');
    pending[1].resolve(1);
    assert.deepEqual(await Promise.all(callers), [0, ...Array(40).fill(1)]);
  });

  it('after a failed read, the callers waiting for the next one get a read of their own', async () => {
    const { pending, clock, reading } = controlledReading();
    const failing = reading();
    clock.at = 5;
    const waiting = reading(5);
    pending[0].reject(new Error('store down'));
    await assert.rejects(failing, /store down/);
    await new Promise(setImmediate);
    assert.equal(pending.length, 2);
    pending[1].resolve(9);
    assert.equal(await waiting, 9);
  });
});

describe("the API's scrapes", () => {
  it('that come together read the store once: one failed read counts one store error', async () => {
    const metrics = createMetrics();
    const down = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    // Fails a moment later, as a store that does not answer, so that the scrapes overlap. A read's
    // queries after its first failure are never awaited: they are marked as handled.
    const sql = (() => {
      const query = new Promise((_, reject) => setTimeout(() => reject(down), 20));
      query.catch(() => {});
      return query;
    }) as unknown as Sql;
    const api = apiMetrics({ sql, policy: DEFAULT_POLICY_SETTINGS, metricsRefreshMs: 5000 }, metrics);
    const texts = await Promise.all(Array.from({ length: 5 }, () => api.scrape()));
    for (const text of texts) assert.match(text, /^llmgw_store_errors_total\{op="metrics_scrape"\} 1$/m);
  });
});
