// Failed authentications (issue 19, item 13): each is counted by reason, and logged at most once a
// minute per source address with how many were not; many addresses cannot grow the limiter's memory.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { authFailures } from '../../../src/auth/failures.ts';
import { PerKeyLimit } from '../../../src/auth/per-key-limit.ts';
import { createMetrics } from '../../../src/metrics/registry.ts';
import type { Sql } from '../../../src/store/db.ts';

describe('PerKeyLimit', () => {
  it('lets one event per key through each window and tells how many it held back', () => {
    const limit = new PerKeyLimit(60_000);
    assert.equal(limit.admit('a', 0), 0);
    assert.equal(limit.admit('a', 1_000), null);
    assert.equal(limit.admit('b', 1_000), 0, 'another key has its own window');
    assert.equal(limit.admit('a', 59_999), null);
    assert.equal(limit.admit('a', 60_000), 2, 'the two held back, told with the next one');
    assert.equal(limit.admit('a', 60_001), null);
    assert.equal(limit.admit('a', 500_000), 1);
  });

  it('holds at most maxKeys: forgets passed windows first, then holds back new keys', () => {
    const limit = new PerKeyLimit(60_000, 3);
    for (const key of ['a', 'b', 'c']) assert.equal(limit.admit(key, 0), 0);
    assert.equal(limit.admit('d', 30_000), null, 'full of live windows: a new key waits');
    assert.equal(limit.admit('a', 30_000), null, 'a known key still counts');
    assert.equal(limit.admit('d', 60_000), 0, 'the passed windows make room');
    assert.equal(limit.admit('a', 60_000), 0, 'forgotten, so its held-back count went with it');
  });
});

describe('authFailures', () => {
  const setUp = () => {
    const metrics = createMetrics();
    const lines: string[] = [];
    let clock = 0;
    const failures = authFailures({
      sql: null as unknown as Sql,
      counter: metrics.authFailures,
      log: { warn: (line: string) => lines.push(line), error: () => assert.fail('no error expected') },
      now: () => clock,
    });
    const counts = async () =>
      Object.fromEntries((await metrics.authFailures.get()).values.map((v) => [v.labels.reason, v.value]));
    return { failures, lines, counts, advance: (ms: number) => (clock += ms) };
  };

  it('counts every failure by reason, from 0 for each reason', async () => {
    const { failures, counts } = setUp();
    assert.deepEqual(await counts(), { missing: 0, malformed: 0, unknown: 0, expired: 0 });
    for (let i = 0; i < 5; i += 1) failures.refused('unknown', '203.0.113.7');
    failures.refused('missing', '203.0.113.8');
    failures.refused('malformed', '203.0.113.8');
    assert.deepEqual(await counts(), { missing: 1, malformed: 1, unknown: 5, expired: 0 });
  });

  it('logs one line a minute per address, the next one saying how many were not logged', () => {
    const { failures, lines, advance } = setUp();
    for (let i = 0; i < 100; i += 1) {
      failures.refused('unknown', '203.0.113.7');
      advance(100); // 100 failures in 10 s
    }
    failures.refused('missing', '198.51.100.1');
    assert.deepEqual(lines, [
      'llmgw api: 401 for 203.0.113.7: a token that is unknown or was revoked',
      'llmgw api: 401 for 198.51.100.1: no Authorization header',
    ]);
    advance(50_000);
    failures.refused('malformed', '203.0.113.7');
    assert.equal(
      lines[2],
      'llmgw api: 401 for 203.0.113.7: an Authorization header that is not Bearer <token> (and 99 more from there since the last such line)',
    );
    assert.equal(lines.length, 3);
  });
});
