import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Replica, ReplicaState } from '../../../src/domain/cluster.ts';
import type { Decision } from '../../../src/domain/decision.ts';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { decideModel } from '../../../src/policy/decide.ts';
import { reservationRefusal, startRefusal } from '../../../src/policy/reservation.ts';
import { buildView } from '../../../src/policy/view.ts';
import {
  apply,
  gpus,
  loadOf,
  memory,
  model,
  node,
  profile,
  quota,
  replica,
  SCOPES,
  world,
} from './fixtures.ts';

const h100 = profile('h100', gpus(2), { gpu_model: 'H100', default_concurrency: 1 });
const chat = model('chat', [h100], { owner: 'team:ml', max_replicas: 4 });
const web = model('web', [h100], { owner: 'team:web' });

/** gpu-1 (4 GPUs) full with web's two borrowed replicas; ml has a guarantee of 4 GPUs and a limit of 6. */
function full(): Snapshot {
  return loadOf(
    world({
      scopes: SCOPES,
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
      name: 'a victim is no longer needed: a replica stopped meanwhile and freed the room',
      change: (s) => ({ ...s, replicas: s.replicas.filter((r) => r.id !== 'w1') }),
      refusal: /victim w2 is no longer needed on node gpu-1/,
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

describe('a reserved replica starts when what runs and what was reserved before it fit', () => {
  const g1 = node('g1', gpus(4));
  const on = (id: string, state: ReplicaState, size = 1) =>
    replica(id, { model: 'm', profile: profile(`x${size}`, gpus(size)), node: 'g1' }, { state });
  // Each row lists g1's active replicas in reservation order; `mine` is the one asking to start.
  const cases: { name: string; onNode: Replica[]; mine: string; refusal: RegExp | null }[] = [
    { name: 'an empty node admits it', onNode: [on('a', 'pending')], mine: 'a', refusal: null },
    {
      name: 'its victims still drain: it waits',
      onNode: [on('r', 'ready', 2), on('v', 'draining', 2), on('a', 'pending', 2)],
      mine: 'a',
      refusal: /g1 has no room yet: .* 6 GPUs of 4 GPUs/,
    },
    {
      name: 'its victims stopped: it starts',
      onNode: [on('r', 'ready', 2), on('a', 'pending', 2)],
      mine: 'a',
      refusal: null,
    },
    {
      // The overcommit of issue 11: each alone fits next to what runs, both together do not.
      name: 'a reservation ahead of it takes the last room first',
      onNode: [on('r', 'ready', 2), on('d', 'draining'), on('a', 'pending'), on('b', 'pending')],
      mine: 'b',
      refusal: /before b would hold 5 GPUs of 4 GPUs/,
    },
    {
      name: 'a reservation behind it does not hold it back',
      onNode: [on('r', 'ready', 2), on('d', 'draining'), on('a', 'pending'), on('b', 'pending')],
      mine: 'a',
      refusal: null,
    },
    {
      name: 'one started ahead of it counts as running',
      onNode: [on('r', 'ready', 2), on('d', 'draining'), on('a', 'starting'), on('b', 'pending')],
      mine: 'b',
      refusal: /5 GPUs of 4 GPUs/,
    },
    {
      name: 'a replica not on the node is refused',
      onNode: [on('a', 'pending')],
      mine: 'z',
      refusal: /holds no room/,
    },
  ];
  for (const { name, onNode, mine, refusal } of cases) {
    it(name, () => {
      const why = startRefusal(g1, onNode, mine);
      if (refusal === null) assert.equal(why, null);
      else assert.match(why ?? '', refusal);
    });
  }

  it('a reserved replica waits while replicas preempted for its model drain, wherever they are', () => {
    const elsewhere = (preempted_for: string, state: ReplicaState = 'draining') => ({
      ...replica('v', { model: 'w', profile: profile('x1', gpus(1)), node: 'g2' }, { state }),
      preempted_for,
    });
    const onNode = [on('a', 'pending')];
    assert.match(
      startRefusal(g1, onNode, 'a', [elsewhere('m')]) ?? '',
      /1 replica preempted for m still drain/,
    );
    assert.equal(startRefusal(g1, onNode, 'a', [elsewhere('other')]), null, 'preempted for another model');
    assert.equal(startRefusal(g1, onNode, 'a', [elsewhere('m', 'stopped')]), null, 'stopped');
  });

  it('a reserved replica waits for the victims reclaimed for it even when other room freed on the node', () => {
    // d drained for a (reclaimed_for), and r stopped since, so the node has room for a beside d: the
    // scopes above a and d count their room once, so a must not run beside d (issue 37).
    const victim = { ...on('d', 'draining', 2), reclaimed_for: 'a' };
    const onNode = [victim, on('a', 'pending', 2)];
    assert.equal(startRefusal(g1, onNode, 'a'), null, 'the node alone would let it start');
    assert.match(startRefusal(g1, onNode, 'a', [victim]) ?? '', /1 replica reclaimed for a still drain/);
    assert.equal(startRefusal(g1, onNode, 'a', [{ ...victim, reclaimed_for: 'b' }]), null, 'for another');
  });

  it('a reserved reclaim waits while its victims drain, and starts once they stopped', () => {
    const s = full();
    const reserved = apply(s, decided(s));
    const view = buildView(reserved);
    const mine = reserved.replicas.find((r) => r.model === 'chat')!;
    assert.match(
      startRefusal(view.nodes.get('gpu-1')!, view.replicasOnNode('gpu-1'), mine.id) ?? '',
      /no room yet/,
    );
    const stopped = buildView({
      ...reserved,
      replicas: reserved.replicas.filter((r) => r.state !== 'draining'),
    });
    assert.equal(startRefusal(stopped.nodes.get('gpu-1')!, stopped.replicasOnNode('gpu-1'), mine.id), null);
  });
});
