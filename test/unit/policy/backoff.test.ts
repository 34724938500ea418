import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { BACKOFF_CAP_MS, BACKOFF_FIRST_MS, backedOffUntil } from '../../../src/policy/backoff.ts';

describe('start backoff', () => {
  const at = (
    profile: string,
    state: 'failed' | 'crashed' | 'ready' | 'stopped' | 'starting',
    t: number,
  ) => ({
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
      name: 'a crash after serving backs off like a failed start, but does not continue a run of failed starts',
      outcomes: [at('a', 'failed', 100), at('a', 'failed', 200), at('a', 'crashed', 300)],
      expected: { a: 300 + BACKOFF_FIRST_MS },
    },
    {
      name: 'crashes in a row double the wait, failed starts between them neither ending nor adding to the run',
      outcomes: [at('a', 'crashed', 100), at('a', 'failed', 200), at('a', 'crashed', 300)],
      expected: { a: 300 + 2 * BACKOFF_FIRST_MS },
    },
    {
      name: 'a replica serving since the last crash ends its run',
      outcomes: [
        at('a', 'crashed', 100),
        at('a', 'crashed', 200),
        at('a', 'ready', 300),
        at('a', 'crashed', 400),
      ],
      expected: { a: 400 + BACKOFF_FIRST_MS },
    },
    {
      name: 'of a run of crashes and one of failed starts, the later end holds',
      outcomes: [at('a', 'crashed', 100), at('a', 'crashed', 150), at('a', 'failed', 200)],
      expected: { a: 150 + 2 * BACKOFF_FIRST_MS },
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
