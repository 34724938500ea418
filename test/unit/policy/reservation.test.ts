import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decision } from '../../../src/domain/decision.ts';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { decideModel } from '../../../src/policy/decide.ts';
import { reservationRefusal, startable } from '../../../src/policy/reservation.ts';
import { buildView } from '../../../src/policy/view.ts';
import {
  apply,
  gpus,
  loadOf,
  memory,
  model,
  node,
  org,
  profile,
  quota,
  replica,
  team,
  world,
} from './fixtures.ts';

const h100 = profile('h100', gpus(2), { gpu_model: 'H100', default_concurrency: 1 });
const chat = model('chat', [h100], { owner: 'team:ml', max_replicas: 4 });
const web = model('web', [h100], { owner: 'team:web' });
const scopes = [org('acme', 'Acme'), team('ml', 'acme'), team('web', 'acme')];

/** gpu-1 (4 GPUs) full with web's two borrowed replicas; ml has a guarantee of 4 GPUs and a limit of 6. */
function full(): Snapshot {
  return loadOf(
    world({
      scopes,
      quotas: [quota('team:ml', gpus(4), gpus(6))],
      models: [chat, web],
      nodes: [node('gpu-1', gpus(4), { gpu_model: 'H100' })],
      replicas: [
        replica('w1', { model: 'web', profile: h100, node: 'gpu-1' }),
        replica('w2', { model: 'web', profile: h100, node: 'gpu-1' }),
      ],
    }),
    'chat',
    1,
  );
}

const decided = (s: Snapshot): Decision => decideModel(s, 'chat', memory());

describe('a reservation re-checks its decision under the lock', () => {
  const cases: { name: string; change: (s: Snapshot) => Snapshot; refusal: RegExp | null }[] = [
    { name: 'nothing changed: it goes through', change: (s) => s, refusal: null },
    {
      name: 'the limit was lowered meanwhile',
      change: (s) => ({ ...s, quotas: [quota('team:ml', gpus(0), gpus(0))] }),
      refusal: /limit of team Acme \/ ml/,
    },
    {
      name: 'the node was cordoned meanwhile',
      change: (s) => ({ ...s, nodes: [node('gpu-1', gpus(4), { gpu_model: 'H100', state: 'cordoned' })] }),
      refusal: /can no longer host h100/,
    },
    {
      name: 'a victim already drains (someone else reclaimed it)',
      change: (s) => ({
        ...s,
        replicas: s.replicas.map((r) => (r.id === 'w2' ? { ...r, state: 'draining' } : r)),
      }),
      refusal: /victim w2 is no longer running/,
    },
    {
      name: 'a victim became protected (web got a guarantee)',
      change: (s) => ({ ...s, quotas: [...s.quotas, quota('team:web', gpus(4))] }),
      refusal: /now protected by a guarantee/,
    },
    {
      name: 'the model was deleted',
      change: (s) => ({ ...s, models: [web] }),
      refusal: /model chat is gone/,
    },
  ];
  for (const { name, change, refusal } of cases) {
    it(name, () => {
      const decision = decided(full());
      assert.equal(decision.action, 'reclaim', decision.reason);
      const why = reservationRefusal(buildView(change(full())), decision);
      if (refusal === null) assert.equal(why, null);
      else assert.match(why ?? '', refusal);
    });
  }

  it('a place decision is refused when another model took the room first', () => {
    const roomy = { ...full(), replicas: [] };
    const decision = decided(roomy);
    assert.equal(decision.action, 'place');
    const taken = { ...roomy, replicas: full().replicas };
    assert.match(reservationRefusal(buildView(taken), decision) ?? '', /no longer has room/);
  });

  it('max_replicas reached by a concurrent pass of the same model', () => {
    const roomy = { ...full(), replicas: [], models: [{ ...chat, max_replicas: 1 }, web] };
    const decision = decided(roomy);
    const again = apply(roomy, decision);
    assert.match(reservationRefusal(buildView(again), decision) ?? '', /max_replicas 1 reached/);
  });
});

describe('a reserved replica starts when its node has room for it', () => {
  it('waits while its victims drain, and starts once they stopped', () => {
    const s = full();
    const reserved = apply(s, decided(s));
    const mine = reserved.replicas.find((r) => r.model === 'chat')!;
    assert.equal(mine.state, 'pending');
    assert.deepEqual(startable(buildView(reserved), 'chat'), []);
    const stopped = { ...reserved, replicas: reserved.replicas.filter((r) => r.state !== 'draining') };
    assert.deepEqual(startable(buildView(stopped), 'chat'), [mine.id]);
  });

  it('a placed replica can start at once', () => {
    const roomy = { ...full(), replicas: [] };
    const placed = apply(roomy, decided(roomy));
    assert.equal(startable(buildView(placed), 'chat').length, 1);
  });
});
