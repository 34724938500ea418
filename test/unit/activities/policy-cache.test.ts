import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PolicyCache } from '../../../src/activities/policy-cache.ts';
import type { QuotaPolicy } from '../../../src/store/snapshot.ts';

const policy = (limit: number): QuotaPolicy => ({
  scopes: [],
  quotas: [{ scope: 'team:ml', limit: { gpus: limit } }],
  measurements: [],
});

/** A store whose answers the test scripts, and a clock it moves by hand. */
function rig(refreshMs = 30_000) {
  let now = 1_000_000;
  let answer: () => Promise<QuotaPolicy> = async () => policy(16);
  const reads: number[] = [];
  const stale: number[] = [];
  const cache = new PolicyCache(
    () => {
      reads.push(now);
      return answer();
    },
    refreshMs,
    { onStale: (_error, ageMs) => stale.push(ageMs) },
    () => now,
  );
  return {
    cache,
    reads,
    stale,
    advance: (ms: number) => {
      now += ms;
    },
    now: () => now,
    answers: (next: () => Promise<QuotaPolicy>) => {
      answer = next;
    },
  };
}

describe('the cached quota policy', () => {
  it('reads the store at most every refresh period', async () => {
    const r = rig();
    await r.cache.get();
    r.advance(29_000);
    await r.cache.get();
    assert.equal(r.reads.length, 1);
    r.advance(1_000);
    await r.cache.get();
    assert.equal(r.reads.length, 2);
  });

  it('reads again at once after a change signal newer than what it holds', async () => {
    const r = rig();
    await r.cache.get();
    r.advance(10);
    r.answers(async () => policy(8));
    const after = await r.cache.get(r.now());
    assert.deepEqual(after.quotas[0].limit, { gpus: 8 });
    assert.equal(r.reads.length, 2);
  });

  it('keeps the last good policy when the store fails, says so, and does not hammer it', async () => {
    const r = rig();
    await r.cache.get();
    r.answers(async () => {
      throw new Error('connection refused');
    });
    r.advance(31_000);
    const kept = await r.cache.get();
    assert.deepEqual(kept.quotas[0].limit, { gpus: 16 }, 'no limit dropped');
    assert.deepEqual(r.stale, [31_000]);
    // A change signal right after the failure does not make it ask the failing store again...
    r.advance(1_000);
    await r.cache.get(r.now());
    assert.equal(r.reads.length, 2);
    // ...until the refresh period has passed; then the store is back.
    r.answers(async () => policy(12));
    r.advance(30_000);
    assert.deepEqual((await r.cache.get()).quotas[0].limit, { gpus: 12 });
    assert.equal(r.reads.length, 3);
  });

  it('fails when the store fails before any policy was read (the activity retries)', async () => {
    const r = rig();
    r.answers(async () => {
      throw new Error('connection refused');
    });
    await assert.rejects(r.cache.get(), /connection refused/);
  });

  it('shares one read between passes that ask at once', async () => {
    const r = rig();
    await Promise.all([r.cache.get(), r.cache.get(), r.cache.get()]);
    assert.equal(r.reads.length, 1);
  });

  it('does not take a read that started before a change for one made after it', async () => {
    const r = rig();
    await r.cache.get();
    let release: (policy: QuotaPolicy) => void = () => {};
    r.answers(() => new Promise((resolve) => (release = resolve)));
    r.advance(31_000);
    const early = r.cache.get(); // a read starts
    r.advance(10);
    r.answers(async () => policy(4));
    const late = r.cache.get(r.now()); // a change signal arrives while that read is under way
    release(policy(16));
    assert.deepEqual((await early).quotas[0].limit, { gpus: 16 });
    assert.deepEqual((await late).quotas[0].limit, { gpus: 4 }, 'the change is seen');
    assert.equal(r.reads.length, 3);
  });
});
