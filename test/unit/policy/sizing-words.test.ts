import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SizingPlan } from '../../../src/policy/sizing.ts';
import { sizingOutcome } from '../../../src/policy/sizing-words.ts';

const plan = (fields: Partial<SizingPlan>): SizingPlan => ({
  plan: [],
  reaches_tokens_per_sec: 0,
  fits: false,
  blocked_by: [],
  ...fields,
});

describe('the words of a sizing plan', () => {
  const cases: { name: string; sizing: SizingPlan; wanted: number; lines: string[] }[] = [
    {
      name: 'a plan that fits says so, to a tenth of a token',
      sizing: plan({
        plan: [{ profile: 'h100', replicas: 2, tokens_per_sec: 2000 }],
        reaches_tokens_per_sec: 2000.04,
        fits: true,
      }),
      wanted: 2000,
      lines: ['reaches 2000 of 2000 tokens/s: fits'],
    },
    {
      name: 'an empty plan that fits though a profile was blocked: the block on a line of its own',
      sizing: plan({ reaches_tokens_per_sec: 3000, fits: true, blocked_by: ['no room for profile h100'] }),
      wanted: 2500,
      lines: ['reaches 3000 of 2500 tokens/s: fits', 'blocked by: no room for profile h100'],
    },
    {
      name: 'a step that preempts names its victims first',
      sizing: plan({
        plan: [{ profile: 'h100', replicas: 1, tokens_per_sec: 1000, preempts: ['chat-1a2b', 'chat-3c4d'] }],
        reaches_tokens_per_sec: 1000.25,
        fits: false,
        blocked_by: ['a limit of team Acme / ml stops h100', 'no room for profile a10'],
      }),
      wanted: 4000,
      lines: [
        'h100 preempts chat-1a2b, chat-3c4d (replicas of a lower claim)',
        'reaches 1000.3 of 4000 tokens/s: does not fit',
        'blocked by: a limit of team Acme / ml stops h100',
        'blocked by: no room for profile a10',
      ],
    },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(sizingOutcome(c.sizing, c.wanted), c.lines));
  }
});
