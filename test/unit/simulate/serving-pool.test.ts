import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ServingPool } from '../../../src/simulate/serving-pool.ts';

const slots = (...perReplica: number[]) => new Map(perReplica.map((c, i) => [`r${i + 1}`, c]));

describe('ServingPool', () => {
  it('queues what finds no free slot, first come first served, and records the wait', () => {
    const pool = new ServingPool([
      { at: 0, serviceMs: 10_000 },
      { at: 0, serviceMs: 4_000 },
      { at: 1_000, serviceMs: 1_000 },
      { at: 2_000, serviceMs: 1_000 },
    ]);
    pool.advance(0, 60_000, slots(1, 1));
    assert.deepEqual([...pool.waits], [0, 0, 3_000, 3_000]);
    assert.equal(pool.running + pool.waiting, 0);
  });

  it('says since when requests wait without a break: a queue that empties and forms again is a new one', () => {
    // One slot: the request of 0 s holds it to 3 s; the one of 1 s waits from 1 s to 3 s and holds it
    // to 4 s; the one of 5 s finds it free; the one of 5.5 s waits from 5.5 s.
    const pool = new ServingPool([
      { at: 0, serviceMs: 3_000 },
      { at: 1_000, serviceMs: 1_000 },
      { at: 5_000, serviceMs: 2_000 },
      { at: 5_500, serviceMs: 1_000 },
    ]);
    const since = (until: number) => {
      pool.advance(until - 1_000, until, slots(1));
      return pool.queueSince;
    };
    assert.deepEqual(
      [since(1_000), since(2_000), since(3_000), since(4_000)],
      [undefined, 1_000, 1_000, undefined],
    );
    assert.deepEqual([since(5_000), since(6_000)], [undefined, 5_500]);
  });

  it('starts waiting requests on a replica that became ready between ticks', () => {
    const pool = new ServingPool([
      { at: 0, serviceMs: 60_000 },
      { at: 0, serviceMs: 60_000 },
    ]);
    pool.advance(0, 1_000, slots(1));
    assert.equal(pool.waiting, 1);
    pool.admit(1_000, slots(1, 1));
    assert.equal(pool.waiting, 0);
    assert.deepEqual([...pool.waits], [0, 1_000]);
  });

  it('lets a draining replica finish its requests while the ready ones take the new', () => {
    const pool = new ServingPool([
      { at: 0, serviceMs: 30_000 },
      { at: 0, serviceMs: 30_000 },
      { at: 2_000, serviceMs: 1_000 },
    ]);
    pool.advance(0, 1_000, slots(1, 1));
    // r2 drains: its request runs on, and the one arriving at 2 s waits only for r1.
    pool.advance(1_000, 60_000, new Map([['r1', 2]]));
    assert.deepEqual([...pool.waits], [0, 0, 0]);
  });

  it('routes to the ready replica with the fewest in flight', () => {
    // Three at 0 s on two replicas of 2 go r1, r2, r1; r2 then drains, and r1 is full: the fourth waits.
    const pool = new ServingPool([
      ...Array.from({ length: 3 }, () => ({ at: 0, serviceMs: 10_000 })),
      { at: 1_500, serviceMs: 1 },
    ]);
    pool.advance(0, 1_000, slots(2, 2));
    pool.advance(1_000, 2_000, new Map([['r1', 2]]));
    assert.equal(pool.waiting, 1);
  });

  it('never runs more than the ready slots without a drain, and every wait is >= 0', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ at: fc.nat(100_000), serviceMs: fc.integer({ min: 1, max: 20_000 }) }), {
          maxLength: 60,
        }),
        fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 }),
        (requests, perReplica) => {
          const pool = new ServingPool(requests.sort((a, b) => a.at - b.at));
          const ready = slots(...perReplica);
          const total = perReplica.reduce((a, b) => a + b, 0);
          for (let t = 0; t < 2_000_000; t += 1_000) {
            pool.advance(t, t + 1_000, ready);
            assert.ok(pool.running <= total);
            if (pool.waiting > 0) assert.equal(pool.running, total);
          }
          assert.ok([...pool.waits].every((w) => w >= 0));
        },
      ),
    );
  });
});
