import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Model } from '../../../src/domain/model.ts';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { ownerWarnings } from '../../../src/policy/owner-warnings.ts';
import { chat, chatScene, cpuLlama, gpus, h100, quota } from './fixtures.ts';

describe('ownerWarnings: the limit that stops a model’s next replica under its new owner', () => {
  // chat runs three vllm-h100 replicas (6 GPUs); team web runs nothing.
  const cases: Record<string, { s: Snapshot; model: Model; want: string[] }> = {
    'no limit on the chain: nothing to say': {
      s: chatScene(),
      model: { ...chat, owner: 'team:web' },
      want: [],
    },
    'a limit its running replicas fill: the next replica is stopped, and said so': {
      s: chatScene({ quotas: [quota('team:web', undefined, gpus(6))] }),
      model: { ...chat, owner: 'team:web' },
      want: [
        'limit of team Beta / web: holds 6 GPUs + 2 > 6, so chat starts no new replica of vllm-h100 under this owner',
      ],
    },
    'a limit with room for the next replica: nothing': {
      s: chatScene({ quotas: [quota('org:beta', undefined, gpus(8))] }),
      model: { ...chat, owner: 'team:web' },
      want: [],
    },
    'the next replica is of the first profile in trial order of the model as it will be: CPU only here': {
      s: chatScene({ quotas: [quota('team:web', undefined, gpus(6))] }),
      model: { ...chat, owner: 'team:web', profiles: [h100, { ...cpuLlama, priority: 20 }] },
      want: [],
    },
    'no owner: no limit': { s: chatScene(), model: { ...chat, owner: null }, want: [] },
    'no profile: nothing to start': {
      s: chatScene({ quotas: [quota('team:web', undefined, gpus(0))] }),
      model: { ...chat, owner: 'team:web', profiles: [] },
      want: [],
    },
  };
  for (const [name, c] of Object.entries(cases))
    it(name, () => assert.deepEqual(ownerWarnings(c.s, c.model), c.want));

  it('changes nothing in the snapshot', () => {
    const s = chatScene({ quotas: [quota('team:web', undefined, gpus(6))] });
    const before = structuredClone(s);
    ownerWarnings(s, { ...chat, owner: 'team:web' });
    assert.deepEqual(s, before);
  });
});
