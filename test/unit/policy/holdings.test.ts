import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Replica } from '../../../src/domain/cluster.ts';
import type { ScopeKey } from '../../../src/domain/scope.ts';
import { protection } from '../../../src/policy/guarantee.ts';
import { holdings, holdsOf } from '../../../src/policy/holdings.ts';
import { scopeFigures } from '../../../src/policy/scope-figures.ts';
import { buildView } from '../../../src/policy/view.ts';
import { gpus, model, node, profile, quota, replica, SCOPES, spreadScene, world } from './fixtures.ts';

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

describe('a reservation that waits for its victims counts its room once (issue 37)', () => {
  // Org Acme, limited to 4 GPUs, over team ml and its projects training and serving: evalm (training)
  // ran what web (serving) takes, and web's replica is reserved beside its victims while they drain.
  const [g1, g2] = [profile('g1', gpus(1)), profile('g2', gpus(2))];
  const mixed = profile('mixed', gpus(1, { cores: 8 }));
  const wide = profile('wide', gpus(2, { cores: 2 }));
  const models = [
    model('evalm', [g1, g2, wide], { owner: 'project:training' }),
    model('web', [g1, g2, mixed], { owner: 'project:serving' }),
    model('chat', [g2], { owner: 'team:ml' }),
    model('free', [g2]),
  ];
  const on = (m: string, p: typeof g1) => ({ model: m, profile: p, node: 'n' });
  const victim = (id: string, p: typeof g1, extra: Partial<Replica> = {}): Replica => ({
    ...replica(id, on('evalm', p), { state: 'draining' }),
    preempted_for: 'web',
    reclaimed_for: 'w',
    ...extra,
  });
  const reservation = (p: typeof g1, state: Replica['state'] = 'pending') =>
    replica('w', on('web', p), { state });
  const keep = replica('k', on('evalm', g2));

  const cases: {
    name: string;
    replicas: Replica[];
    owners?: Record<string, ScopeKey | null>;
    /** holds of org:acme, team:ml, project:training, project:serving (GPUs, then cores when set). */
    want: [number, number, number, number];
    cores?: [number, number, number, number];
  }[] = [
    {
      name: 'a preemption under one limited ancestor: the victim counts, the reservation adds nothing',
      replicas: [keep, victim('v', g2), reservation(g2)],
      want: [4, 4, 4, 2],
    },
    {
      name: 'a reclaim under one limited ancestor: the same, the victim preempted for nobody',
      replicas: [keep, victim('v', g2, { preempted_for: null }), reservation(g2)],
      want: [4, 4, 4, 2],
    },
    {
      name: 'a victim larger than the reservation: the victim counts whole',
      replicas: [keep, victim('v', g2), reservation(g1)],
      want: [4, 4, 4, 1],
    },
    {
      name: 'a reservation larger than its victims: it counts what they do not cover',
      replicas: [keep, victim('v', g1), reservation(g2)],
      want: [4, 4, 3, 2],
    },
    {
      name: 'two victims for one reservation',
      replicas: [victim('v1', g1), victim('v2', g1), reservation(g2)],
      want: [2, 2, 2, 2],
    },
    {
      name: 'per dimension: what the victims hold on one dimension covers nothing on another',
      replicas: [victim('v', wide), reservation(mixed)],
      want: [2, 2, 2, 1],
      cores: [8, 8, 2, 8],
    },
    {
      name: 'once the victim stopped, the reservation counts whole',
      replicas: [keep, { ...victim('v', g2), state: 'stopped' }, reservation(g2)],
      want: [4, 4, 2, 2],
    },
    {
      name: 'a reservation that started while its victim still drains: both run, both count',
      replicas: [keep, victim('v', g2, { preempted_for: null }), reservation(g2, 'starting')],
      want: [6, 6, 4, 2],
    },
    {
      name: "a victim whose reservation is gone frees room for nobody's reservation: it counts alone",
      replicas: [keep, victim('v', g2)],
      want: [4, 4, 4, 0],
    },
    {
      name: 'a victim drained before the store kept whom for (no reclaimed_for): both count',
      replicas: [keep, victim('v', g2, { reclaimed_for: null }), reservation(g2)],
      want: [6, 6, 4, 2],
    },
    {
      name: "a victim of another org's model covers nothing in Acme",
      replicas: [keep, { ...victim('v', g2), model: 'free' }, reservation(g2)],
      want: [4, 4, 2, 2],
    },
    {
      name: 'a reservation of the victims own scope (chat of team ml): covered from team ml up',
      replicas: [keep, victim('v', g2), { ...reservation(g2), model: 'chat' }],
      want: [4, 4, 4, 0],
    },
  ];
  const scopes: ScopeKey[] = ['org:acme', 'team:ml', 'project:training', 'project:serving'];
  for (const c of cases) {
    it(c.name, () => {
      const view = buildView(
        world({
          scopes: SCOPES,
          quotas: [quota('org:acme', undefined, gpus(4))],
          models,
          nodes: [node('n', gpus(8, { cores: 64 }))],
          replicas: c.replicas,
        }),
      );
      assert.deepEqual(
        scopes.map((s) => holdsOf(view, s).gpus),
        c.want,
      );
      if (c.cores)
        assert.deepEqual(
          scopes.map((s) => holdsOf(view, s).cores),
          c.cores,
        );
      // The figures the API, the console and the metrics show are the same holds, and borrowed (no
      // guarantee here: all of it) counts the same room once too.
      const figures = scopeFigures(view);
      for (const s of scopes) {
        assert.deepEqual(figures.get(s)!.holds, holdsOf(view, s));
        assert.deepEqual(figures.get(s)!.borrowed, holdsOf(view, s));
      }
    });
  }

  it('a scope guaranteed what runs takes the reservation once its victims are taken: protected, none borrowed', () => {
    const view = buildView(
      world({
        scopes: SCOPES,
        quotas: [quota('org:acme', gpus(4), gpus(4))],
        models,
        nodes: [node('n', gpus(8))],
        replicas: [keep, victim('v', g2), reservation(g2)],
      }),
    );
    assert.equal(protection(view).get('w'), 'org:acme', 'counted twice, it did not fit and was borrowed');
    assert.deepEqual(scopeFigures(view).get('org:acme'), {
      holds: { gpus: 4, cores: 0, memory_gib: 0 },
      borrowed: { gpus: 0, cores: 0, memory_gib: 0 },
    });
  });

  it('the victims a scope did not take cover nothing in its guarantee', () => {
    // Team ml is guaranteed 2 GPUs: keep takes them, the victim is past them, so the reservation is too.
    const view = buildView(
      world({
        scopes: SCOPES,
        quotas: [quota('team:ml', gpus(2))],
        models,
        nodes: [node('n', gpus(8))],
        replicas: [keep, victim('v', g2), reservation(g2)],
      }),
    );
    assert.equal(protection(view).get('w'), null);
    assert.deepEqual(scopeFigures(view).get('team:ml')!.borrowed, { gpus: 2, cores: 0, memory_gib: 0 });
  });
});
