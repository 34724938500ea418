import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { holdings, holdsOf } from '../../../src/policy/holdings.ts';
import { buildView } from '../../../src/policy/view.ts';
import { spreadScene } from './fixtures.ts';

describe('holds per scope', () => {
  const view = buildView(spreadScene());

  it('holds(S) sums the replicas of models owned by S and beneath it; ownerless ones count nowhere', () => {
    const holds = holdings(view);
    assert.deepEqual(holds.get('project:training'), { gpus: 4, cores: 0, memory_gib: 0 });
    assert.deepEqual(holds.get('project:serving'), { gpus: 0, cores: 8, memory_gib: 0 });
    assert.deepEqual(holds.get('team:ml'), { gpus: 4, cores: 8, memory_gib: 0 });
    assert.deepEqual(holds.get('org:acme'), { gpus: 4, cores: 8, memory_gib: 0 });
    assert.deepEqual(holds.get('org:beta'), { gpus: 0, cores: 0, memory_gib: 0 });
  });

  it('a draining replica still holds; a stopped or failed one does not', () => {
    const s = spreadScene();
    const states = { t1: 'draining', t2: 'stopped', s1: 'failed' } as const;
    const changed = buildView({
      ...s,
      replicas: s.replicas.map((r) =>
        r.id in states ? { ...r, state: states[r.id as keyof typeof states] } : r,
      ),
    });
    assert.deepEqual(holdings(changed).get('team:ml'), { gpus: 2, cores: 0, memory_gib: 0 });
  });

  it('holdsOf reads the view; a key that names no scope holds nothing', () => {
    assert.deepEqual(holdsOf(view, 'team:ml'), { gpus: 4, cores: 8, memory_gib: 0 });
    assert.deepEqual(holdsOf(view, 'team:gone'), { gpus: 0, cores: 0, memory_gib: 0 });
  });
});
