// Bursts (POLICY.md "Scaling a model"): a pass places as many replicas as the load needs, up to the
// limit, max_replicas and the room; and the reservation lock re-checks the whole burst.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decision } from '../../../src/domain/decision.ts';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { burstRefusal, decideBurst, looksAgainAfter, MAX_BURST } from '../../../src/policy/burst.ts';
import { decideModel } from '../../../src/policy/decide.ts';
import { buildView } from '../../../src/policy/view.ts';
import {
  apply,
  gpus,
  loadOf,
  measured,
  memory,
  model,
  node,
  profile,
  quota,
  replica,
  SCOPES,
  settle,
  world,
} from './fixtures.ts';

// svc serves 10 in flight per 1-GPU replica; it runs one on a cluster of three 8-GPU nodes.
const g1 = profile('g1', gpus(1));
const svc = (options: { max?: number } = {}) =>
  model('svc', [g1], { owner: 'team:ml', max_replicas: options.max ?? 100 });
const scene = (parts: { max?: number; limit?: number; nodes?: number; inFlight?: number } = {}): Snapshot =>
  loadOf(
    world({
      scopes: SCOPES,
      quotas: parts.limit === undefined ? [] : [quota('team:ml', undefined, gpus(parts.limit))],
      models: [svc({ max: parts.max })],
      measurements: [measured('svc', 'g1', 10, 500)],
      nodes: Array.from({ length: parts.nodes ?? 3 }, (_, i) => node(`n${i + 1}`, gpus(8))),
      replicas: [replica('r1', { model: 'svc', profile: g1, node: 'n1' })],
    }),
    'svc',
    parts.inFlight ?? 200,
  );
const burstOf = (s: Snapshot, most?: number) => decideBurst(buildView(s), 'svc', memory(), most);
const applied = (s: Snapshot, burst: Decision[]) => burst.reduce(apply, s);

describe('decideBurst', () => {
  const cases: { name: string; scene: Snapshot; most?: number; places: number; next: string }[] = [
    { name: 'a 10x load step is covered in one pass', scene: scene(), places: 19, next: 'none' },
    { name: 'max_replicas stops it', scene: scene({ max: 5 }), places: 4, next: 'none' },
    { name: 'the limit stops it', scene: scene({ limit: 6 }), places: 5, next: 'none' },
    { name: 'missing room stops it', scene: scene({ nodes: 1 }), places: 7, next: 'none' },
    { name: 'a pass places at most `most`', scene: scene(), most: 4, places: 4, next: 'place' },
    { name: 'no load past capacity: nothing', scene: scene({ inFlight: 5 }), places: 0, next: 'none' },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const burst = burstOf(c.scene, c.most);
      assert.equal(burst.filter((d) => d.action === 'place').length, c.places);
      if (c.places === 0) assert.equal(burst.length, 1);
      assert.equal(decideModel(applied(c.scene, burst), 'svc', memory()).action, c.next);
    });
  }

  it('does not flap: the replicas placed are all needed, and once ready the next pass does nothing', () => {
    const s = scene({ inFlight: 95 }); // 10 replicas of 10 serve it; 9 would not
    const burst = burstOf(s);
    assert.equal(burst.length, 9);
    const after = settle(applied(s, burst));
    assert.equal(decideModel(after, 'svc', memory()).action, 'none');
  });

  it('each step says why, with the replicas counted so far', () => {
    const [first, second] = burstOf(scene());
    assert.match(first.reason, /^scale up: 200 in flight > 10 at SLO on 1 replica; placed g1 on n1/);
    assert.match(second.reason, /^scale up: 200 in flight > 20 at SLO on 2 replicas; placed g1 on n1/);
  });

  it('is bounded by MAX_BURST by default', () => {
    const burst = burstOf(scene({ nodes: 8, inFlight: 10_000 }));
    assert.equal(burst.length, MAX_BURST);
  });
});

describe('decideBurst with reclaim', () => {
  // team:ml is guaranteed 8 GPUs and holds nothing; guest (org:beta) borrows n2 whole; n1 has `free` GPUs.
  const guest = model('guest', [profile('g8', gpus(8))], { owner: 'org:beta' });
  const reclaimScene = (free: number) =>
    loadOf(
      world({
        scopes: SCOPES,
        quotas: [quota('team:ml', gpus(8))],
        models: [svc(), guest],
        measurements: [measured('svc', 'g1', 10, 500)],
        nodes: [node('n1', gpus(free)), node('n2', gpus(8))],
        replicas: [replica('guest-1', { model: 'guest', profile: guest.profiles[0], node: 'n2' })],
      }),
      'svc',
      200,
    );

  it('stops before a reclaim: its victims drain first, in a pass of its own', () => {
    const burst = burstOf(reclaimScene(2));
    assert.deepEqual(
      burst.map((d) => d.action),
      ['place', 'place'],
    );
    assert.equal(decideModel(applied(reclaimScene(2), burst), 'svc', memory()).action, 'reclaim');
  });

  it('looks again at once after a reclaim: what it frees is placed on the next pass', () => {
    assert.equal(looksAgainAfter(burstOf(reclaimScene(0))), true);
  });

  it('a reclaim stays alone', () => {
    const burst = burstOf(reclaimScene(0));
    assert.deepEqual(
      burst.map((d) => d.action),
      ['reclaim'],
    );
  });
});

describe('looksAgainAfter', () => {
  const cases: [string, () => Decision[], boolean][] = [
    [
      'a burst that placed what the view asked for: its replicas wake the reconciler',
      () => burstOf(scene({ inFlight: 50 })),
      false,
    ],
    ['one replica placed', () => burstOf(scene({ inFlight: 15 })), false],
    ['a burst at its bound: more may be needed', () => burstOf(scene({ inFlight: 2000, nodes: 8 })), true],
  ];
  for (const [name, reserved, expected] of cases) {
    it(name, () => {
      const burst = reserved();
      assert.equal(looksAgainAfter(burst), expected, burst.map((d) => d.action).join(', '));
    });
  }
  it('a burst at its bound is what the bound makes', () => {
    assert.equal(burstOf(scene({ inFlight: 2000, nodes: 8 })).length, MAX_BURST);
  });
});

describe('burstRefusal', () => {
  const planned = burstOf(scene({ nodes: 1, inFlight: 40 })); // three places on n1

  it('accepts the burst on the view it was planned on', () => {
    assert.equal(planned.length, 3);
    assert.equal(burstRefusal(buildView(scene({ nodes: 1 })), planned), null);
  });

  it('refuses it when a later place no longer fits (someone took the room first)', () => {
    const s = scene({ nodes: 1 });
    const other = model('other', [g1]);
    const taken: Snapshot = {
      ...s,
      models: [...s.models, other],
      replicas: [
        ...s.replicas,
        ...[1, 2, 3, 4, 5].map((i) => replica(`o${i}`, { model: 'other', profile: g1, node: 'n1' })),
      ],
    };
    assert.equal(burstRefusal(buildView(taken), planned), 'node n1 no longer has room for g1');
  });

  it('refuses anything but a place after the first', () => {
    const [first] = planned;
    const notPlace: Decision = { ...first, action: 'reclaim', victims: [] };
    assert.equal(
      burstRefusal(buildView(scene({ nodes: 1 })), [first, notPlace]),
      'a reclaim cannot follow a place in one pass',
    );
  });
});
