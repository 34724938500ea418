import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ServingPool } from '../../../src/simulate/serving-pool.ts';

describe('ServingPool', () => {
  it('queues what finds no free slot, first come first served, and records the wait', () => {
    const pool = new ServingPool([
      { at: 0, serviceMs: 10_000 },
      { at: 0, serviceMs: 4_000 },
      { at: 1_000, serviceMs: 1_000 },
      { at: 2_000, serviceMs: 1_000 },
    ]);
    pool.advance(0, 60_000, 2);
    assert.deepEqual([...pool.waits], [0, 0, 3_000, 3_000]);
    assert.equal(pool.running + pool.waiting, 0);
  });

  it('starts waiting requests when slots are added between ticks', () => {
    const pool = new ServingPool([
      { at: 0, serviceMs: 60_000 },
      { at: 0, serviceMs: 60_000 },
    ]);
    pool.advance(0, 1_000, 1);
    assert.equal(pool.waiting, 1);
    pool.advance(1_000, 2_000, 2);
    assert.deepEqual([...pool.waits], [0, 1_000]);
  });

  it('never runs more than its slots, and serves every request once it has any', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.nat(100_000), serviceMs: fc.integer({ min: 1, max: 20_000 }) }), {
          maxLength: 60,
        }),
        fc.integer({ min: 1, max: 5 }),
        (requests, slots) => {
          const pool = new ServingPool(requests.sort((a, b) => a.at - b.at));
          for (let t = 0; t < 2_000_000; t += 1_000) {
            pool.advance(t, t + 1_000, slots);
            assert.ok(pool.running <= slots);
          }
          assert.ok([...pool.waits].every((w) => w >= 0));
        },
      ),
    );
  });
});
