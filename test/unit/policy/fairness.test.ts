import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Replica } from '../../../src/domain/cluster.ts';
import type { Decision } from '../../../src/domain/decision.ts';
import type { Model, Profile } from '../../../src/domain/model.ts';
import type { Quota } from '../../../src/domain/quota.ts';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { decideBurst } from '../../../src/policy/burst.ts';
import { decideModel } from '../../../src/policy/decide.ts';
import { reservationRefusal } from '../../../src/policy/reservation.ts';
import { buildView } from '../../../src/policy/view.ts';
import {
  apply,
  cores,
  gpus,
  loadOf,
  measured,
  memory,
  model,
  NOW,
  node,
  profile,
  quota,
  replica,
  SCOPES,
  settle,
  world,
} from './fixtures.ts';

const g1 = profile('g1', gpus(1));

/** A model of team Acme / ml (or `owner`) with one 1-GPU profile, min_replicas 2, measured at 10 per replica. */
const member = (name: string, options: Partial<Model> = {}) =>
  model(name, [g1], { owner: 'team:ml', min_replicas: 2, max_replicas: 2, ...options });

const running = (m: Model, n: number, p: Profile = g1): Replica[] =>
  Array.from({ length: n }, (_, i) =>
    replica(`${m.name}-${i + 1}`, { model: m.name, profile: p, node: 'n1' }),
  );

interface Scene {
  models: Model[];
  runs?: Record<string, number>;
  quotas?: Quota[];
  load?: Record<string, number>;
  startOutcomes?: Snapshot['startOutcomes'];
}

function scene({ models, runs = {}, quotas, load = {}, startOutcomes }: Scene): Snapshot {
  let s = world({
    scopes: SCOPES,
    quotas: quotas ?? [quota('team:ml', undefined, gpus(2))],
    models,
    nodes: [node('n1', gpus(8, { cores: 64 })), node('n2', gpus(8, { cores: 64 }))],
    measurements: models.flatMap((m) => m.profiles.map((p) => measured(m.name, p.name, 10, 100))),
    replicas: models.flatMap((m) => running(m, runs[m.name] ?? 0, m.profiles[0])),
    ...(startOutcomes && { startOutcomes }),
  });
  for (const [name, inFlight] of Object.entries(load)) s = loadOf(s, name, inFlight);
  return s;
}

const decide = (s: Snapshot, name = 'a') => decideModel(s, name, memory());

describe('fair shares from the first placement', () => {
  // a asks for a replica; does it take the limit's room, or leave it to b?
  const cases: { name: string; scene: Scene; want: 'place' | { yieldsTo: string } | 'limit' }[] = [
    {
      name: 'a 2nd floor replica yields while a sibling has no 1st',
      scene: { models: [member('a'), member('b')], runs: { a: 1 } },
      want: { yieldsTo: 'b' },
    },
    {
      name: 'a 1st floor replica never yields to an equal claim',
      scene: { models: [member('a'), member('b')], quotas: [quota('team:ml', undefined, gpus(1))] },
      want: 'place',
    },
    {
      name: 'takes what is left beside what the higher claims wait for',
      scene: {
        models: [member('a'), member('b')],
        runs: { a: 1 },
        quotas: [quota('team:ml', undefined, gpus(3))],
      },
      want: 'place',
    },
    {
      name: 'leaves room to the strongest it fits, then to the next',
      scene: {
        models: [member('a', { min_replicas: 3, max_replicas: 3 }), member('b'), member('c')],
        runs: { a: 2, b: 1 },
        quotas: [quota('team:ml', undefined, gpus(5))],
      },
      want: { yieldsTo: 'c' },
    },
    {
      name: 'does not wait for a sibling whose profiles are all backed off',
      scene: {
        models: [member('a'), member('b')],
        runs: { a: 1 },
        startOutcomes: { b: [{ profile: 'g1', state: 'failed', at: NOW - 1_000 }] },
      },
      want: 'place',
    },
    {
      name: 'waits again for a sibling whose backoff has run out',
      scene: {
        models: [member('a'), member('b')],
        runs: { a: 1 },
        startOutcomes: { b: [{ profile: 'g1', state: 'failed', at: NOW - 60_000 }] },
      },
      want: { yieldsTo: 'b' },
    },
    {
      name: 'does not wait for a sibling that no node can host',
      scene: {
        models: [
          member('a'),
          model('b', [profile('a100', gpus(1), { gpu_model: 'A100' })], {
            owner: 'team:ml',
            min_replicas: 1,
          }),
        ],
        runs: { a: 1 },
      },
      want: 'place',
    },
    {
      name: 'does not wait for a sibling a nearer limit stops',
      scene: {
        models: [member('a'), member('b', { owner: 'project:serving' })],
        runs: { a: 1 },
        quotas: [quota('team:ml', undefined, gpus(2)), quota('project:serving', undefined, gpus(0))],
      },
      want: 'place',
    },
    {
      name: 'does not wait for a sibling at its max_replicas',
      scene: { models: [member('a'), member('b', { min_replicas: 1, max_replicas: 0 })], runs: { a: 1 } },
      want: 'place',
    },
    {
      name: 'yields a floor replica to the demand of a higher priority',
      scene: {
        models: [member('a'), member('b', { priority: 1, min_replicas: 0, max_replicas: 4 })],
        runs: { a: 1, b: 0 },
        load: { b: 5 },
      },
      want: { yieldsTo: 'b' },
    },
    {
      name: 'does not yield a floor replica to demand of its own priority',
      scene: {
        models: [member('a'), member('b', { min_replicas: 0, max_replicas: 4 })],
        runs: { a: 1 },
        load: { b: 5 },
      },
      want: 'place',
    },
    {
      name: 'a demand replica yields to a floor replica',
      scene: {
        models: [member('a', { min_replicas: 0, max_replicas: 4 }), member('b')],
        runs: { a: 1 },
        load: { a: 15 },
      },
      want: { yieldsTo: 'b' },
    },
    {
      name: 'a model under no limit never yields',
      scene: { models: [member('a'), member('b')], runs: { a: 1 }, quotas: [] },
      want: 'place',
    },
    {
      name: 'a full limit stops it as before: yielding is for room there is',
      scene: { models: [member('a'), member('b')], runs: { a: 1, b: 1 } },
      want: 'limit',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const d = decide(scene(c.scene));
      if (c.want === 'place') {
        assert.equal(d.action, 'place', d.reason);
        return;
      }
      assert.equal(d.action, 'none', d.reason);
      if (c.want === 'limit') {
        assert.equal(d.pending?.[0]?.code, 'limit');
        return;
      }
      assert.deepEqual(d.pending, [
        {
          code: 'yields',
          profile: 'g1',
          to: c.want.yieldsTo,
          scope: 'team:ml',
          scope_label: 'team Acme / ml',
        },
      ]);
    });
  }

  it('says why in one sentence', () => {
    const d = decide(scene({ models: [member('a'), member('b')], runs: { a: 1 } }));
    assert.equal(
      d.reason,
      'scale up: 1 replica < min_replicas 2; pending: g1 waits: b has fewer of its share under team Acme / ml',
    );
  });

  it('tries its next profile, one the limit does not count', () => {
    const a = member('a', { profiles: [g1, profile('c8', cores(8))] });
    const d = decide(scene({ models: [a, member('b')], runs: { a: 1 } }));
    assert.equal(d.action, 'place', d.reason);
    assert.equal(d.profile, 'c8');
    assert.deepEqual(d.rejected, [
      { profile: 'g1', why: 'g1 waits: b has fewer of its share under team Acme / ml' },
    ]);
  });

  it('a burst stops at the fair share: one each when the models arrive together', () => {
    const s = scene({
      models: [member('a'), member('b'), member('c')],
      quotas: [quota('team:ml', undefined, gpus(3))],
    });
    const burst = decideBurst(buildView(s), 'a', memory());
    assert.deepEqual(
      burst.map((d) => d.action),
      ['place'],
      'the 2nd would take the room b and c wait for',
    );
  });

  it('the reservation is refused when a sibling of a higher claim arrived since the plan', () => {
    const planned = scene({ models: [member('a')], runs: { a: 1 } });
    const d = decide(planned);
    assert.equal(d.action, 'place');
    const now = { ...planned, models: [...planned.models, member('b')] };
    assert.equal(
      reservationRefusal(buildView(now), d),
      'g1 waits: b has fewer of its share under team Acme / ml',
    );
    assert.equal(reservationRefusal(buildView(planned), d), null);
  });

  it('does not flap: equal models settle at one each, without a preemption, and stay', () => {
    let s = scene({ models: [member('a'), member('b')] });
    const actions: string[] = [];
    for (let pass = 0; pass < 6; pass++) {
      for (const name of ['a', 'b']) {
        const burst: Decision[] = decideBurst(buildView(s), name, memory());
        for (const d of burst) {
          actions.push(`${name}:${d.action}${d.pending ? `(${d.pending.map((p) => p.code).join()})` : ''}`);
          s = apply(s, d);
        }
        s = settle(s);
      }
    }
    assert.deepEqual(
      actions.slice(0, 2),
      ['a:place', 'b:place'],
      "a's 2nd yields to b's 1st in a's first pass",
    );
    assert.deepEqual(new Set(actions.slice(2)), new Set(['a:none(limit)', 'b:none(limit)']));
    assert.deepEqual(
      s.replicas
        .filter((r) => r.state === 'ready')
        .map((r) => r.model)
        .sort(),
      ['a', 'b'],
    );
  });
});
