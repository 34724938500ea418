import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pending } from '../../../src/domain/decision.ts';
import { pendingPhrase, pendingSentence } from '../../../src/policy/explain.ts';
import { gpus } from './fixtures.ts';

// Decisions carry what a model waits for as codes; these are the words users read for each.
describe('pendingPhrase: one code in words', () => {
  const cases: { pending: Pending; says: string }[] = [
    {
      pending: { code: 'no_room', profile: 'vllm-h100', needs: gpus(2, { cores: 16 }) },
      says: 'no room for vllm-h100 (needs 2 GPUs, 16 cores)',
    },
    {
      pending: {
        code: 'limit',
        profile: 'vllm-h100',
        scope: 'team:ml',
        scope_label: 'team Acme / ml',
        resource: 'gpus',
      },
      says: 'a limit of team Acme / ml stops vllm-h100',
    },
    { pending: { code: 'backoff', profile: 'small' }, says: 'small is backed off' },
    { pending: { code: 'unmeasured', profile: 'cpu-llama' }, says: 'cpu-llama is not measured' },
    { pending: { code: 'slo_unmet', profile: 'slow' }, says: 'slow cannot meet its SLO' },
    { pending: { code: 'max_replicas', max_replicas: 3 }, says: 'max_replicas 3 reached' },
    { pending: { code: 'no_profile' }, says: 'the model has no profile' },
  ];
  for (const c of cases) {
    it(c.pending.code, () => assert.equal(pendingPhrase(c.pending), c.says));
  }
});

describe('pendingSentence: every code of a decision', () => {
  const noRoom: Pending = { code: 'no_room', profile: 'a', needs: gpus(4) };
  const backoff: Pending = { code: 'backoff', profile: 'b' };
  const slo: Pending = { code: 'slo_unmet', profile: 'c' };
  const cases: { name: string; pending: Pending[]; says: string }[] = [
    { name: 'one', pending: [noRoom], says: 'no room for a (needs 4 GPUs)' },
    { name: 'two', pending: [noRoom, backoff], says: 'no room for a (needs 4 GPUs) and b is backed off' },
    {
      name: 'three, in the order given',
      pending: [slo, noRoom, backoff],
      says: 'c cannot meet its SLO, no room for a (needs 4 GPUs) and b is backed off',
    },
    { name: 'the same words once', pending: [backoff, backoff], says: 'b is backed off' },
  ];
  for (const c of cases) {
    it(c.name, () => assert.equal(pendingSentence(c.pending), c.says));
  }
});
