import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BACKOFF_CAP_MS, BACKOFF_FIRST_MS, backedOffUntil } from '../../../src/policy/backoff.ts';
import { loadZone } from '../../../src/policy/load-zone.ts';

describe('start backoff', () => {
  const at = (profile: string, state: 'failed' | 'ready' | 'stopped' | 'starting', t: number) => ({
    profile,
    state,
    at: t,
  });
  const cases = [
    { name: 'no failure: no backoff', outcomes: [at('a', 'ready', 100)], expected: {} },
    {
      name: 'one failure: the first wait',
      outcomes: [at('a', 'failed', 100)],
      expected: { a: 100 + BACKOFF_FIRST_MS },
    },
    {
      name: 'three failures in a row: the wait doubles twice',
      outcomes: [at('a', 'failed', 100), at('a', 'failed', 200), at('a', 'failed', 300)],
      expected: { a: 300 + 4 * BACKOFF_FIRST_MS },
    },
    {
      name: 'a success resets the count',
      outcomes: [
        at('a', 'failed', 100),
        at('a', 'failed', 200),
        at('a', 'ready', 300),
        at('a', 'failed', 400),
      ],
      expected: { a: 400 + BACKOFF_FIRST_MS },
    },
    {
      name: 'a replica still starting neither fails nor succeeds',
      outcomes: [at('a', 'failed', 100), at('a', 'starting', 200)],
      expected: { a: 100 + BACKOFF_FIRST_MS },
    },
    {
      name: 'profiles are backed off each on its own',
      outcomes: [at('a', 'failed', 100), at('b', 'stopped', 150)],
      expected: { a: 100 + BACKOFF_FIRST_MS },
    },
    {
      name: 'the wait is capped',
      outcomes: Array.from({ length: 20 }, (_, i) => at('a', 'failed', i)),
      expected: { a: 19 + BACKOFF_CAP_MS },
    },
  ];
  for (const { name, outcomes, expected } of cases) {
    it(name, () => assert.deepEqual(backedOffUntil(outcomes), expected));
  }
});

describe('load zones: when a load report wakes a reconciler', () => {
  const cases: { name: string; inFlight: number; replicas: number[]; zone: ReturnType<typeof loadZone> }[] = [
    { name: 'any load and no replica is above', inFlight: 1, replicas: [], zone: 'above' },
    { name: 'no load and no replica is within', inFlight: 0, replicas: [], zone: 'within' },
    { name: 'more than capacity is above', inFlight: 21, replicas: [10, 10], zone: 'above' },
    { name: 'exactly capacity is within', inFlight: 20, replicas: [10, 10], zone: 'within' },
    { name: '70% of the rest without one replica is below', inFlight: 7, replicas: [10, 10], zone: 'below' },
    { name: 'just over 70% of the rest is within', inFlight: 8, replicas: [10, 10], zone: 'within' },
    {
      name: 'a single replica is never below (nothing to take back)',
      inFlight: 0,
      replicas: [10],
      zone: 'within',
    },
    { name: 'the smallest replica is the one that could go', inFlight: 14, replicas: [4, 20], zone: 'below' },
  ];
  for (const { name, inFlight, replicas, zone } of cases) {
    it(name, () => assert.equal(loadZone(inFlight, replicas), zone));
  }
});
