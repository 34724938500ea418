import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sentOnce } from '../../../src/api/routes/events/sent-once.ts';

describe('sentOnce', () => {
  it('lets a key through once while the feed keeps reading it again', () => {
    let now = 1;
    const fresh = sentOnce({ ttlMs: 1000, perf: { now: () => now } });
    assert.equal(fresh('decision 1'), true);
    for (; now < 5000; now += 500) assert.equal(fresh('decision 1'), false, `read again at ${now}`);
  });

  it('forgets a key ttlMs after its last reading', () => {
    let now = 1;
    const fresh = sentOnce({ ttlMs: 1000, perf: { now: () => now } });
    assert.equal(fresh('decision 1'), true);
    now += 1001;
    assert.equal(fresh('decision 1'), true, 'expired: new again');
  });

  it('forgets the oldest keys past max', () => {
    const fresh = sentOnce({ max: 2 });
    for (const key of ['a', 'b', 'c']) assert.equal(fresh(key), true);
    assert.equal(fresh('c'), false);
    assert.equal(fresh('a'), true, 'a was the oldest');
  });
});
