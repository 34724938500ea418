import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Claim } from '../../../src/domain/decision.ts';
import { claimOf, claims, compareClaims, nextClaim } from '../../../src/policy/claims.ts';
import { buildView } from '../../../src/policy/view.ts';
import { gpus, loadOf, measured, model, node, profile, replica, world } from './fixtures.ts';

const claim = (priority: number, tier: Claim['tier'], k = 1, of = 1): Claim => ({ priority, tier, k, of });

describe('compareClaims', () => {
  const cases: { name: string; a: Claim; b: Claim; want: 'stronger' | 'equal' | 'weaker' }[] = [
    {
      name: 'a higher priority wins over any tier',
      a: claim(1, 'surplus'),
      b: claim(0, 'floor'),
      want: 'stronger',
    },
    { name: 'floor over demand', a: claim(0, 'floor'), b: claim(0, 'demand', 2), want: 'stronger' },
    { name: 'demand over surplus', a: claim(0, 'demand', 2), b: claim(0, 'surplus', 3), want: 'stronger' },
    {
      name: "a model's 1st floor replica over another's 2nd",
      a: claim(0, 'floor', 1, 2),
      b: claim(0, 'floor', 2, 2),
      want: 'stronger',
    },
    {
      name: 'floor replicas of the same rank are equal',
      a: claim(0, 'floor', 1, 3),
      b: claim(0, 'floor', 1, 1),
      want: 'equal',
    },
    {
      name: 'demand replicas have no rank',
      a: claim(0, 'demand', 2),
      b: claim(0, 'demand', 5),
      want: 'equal',
    },
    {
      name: 'surplus replicas have no rank',
      a: claim(0, 'surplus', 9),
      b: claim(0, 'surplus', 2),
      want: 'equal',
    },
    {
      name: 'a lower priority loses to a surplus of a higher one',
      a: claim(-1, 'floor'),
      b: claim(0, 'surplus'),
      want: 'weaker',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = Math.sign(compareClaims(c.a, c.b));
      assert.equal(got, { stronger: 1, equal: 0, weaker: -1 }[c.want]);
      assert.equal(Math.sign(compareClaims(c.b, c.a)), got === 0 ? 0 : -got, 'the order is antisymmetric');
    });
  }
});

describe('claims of serving replicas', () => {
  const p = profile('p', gpus(1));
  const chat = model('chat', [p], { min_replicas: 1, priority: 2 });
  const serving = (ids: string[], state: 'ready' | 'draining' = 'ready') =>
    ids.map((id) => replica(id, { model: 'chat', profile: p, node: 'n' }, { state }));
  const base = world({
    models: [chat],
    nodes: [node('n', gpus(8))],
    measurements: [measured('chat', 'p', 10, 100)],
    replicas: serving(['c1', 'c2', 'c3', 'c4']),
  });
  const tiersOf = (s = base) => {
    const all = claims(buildView(s));
    return ['c1', 'c2', 'c3', 'c4'].map((id) => all.get(id)?.tier ?? 'none');
  };

  it('the floor first, then what the load needs, then surplus (25 in flight, 10 per replica)', () => {
    assert.deepEqual(tiersOf(loadOf(base, 'chat', 25)), ['floor', 'demand', 'demand', 'surplus']);
  });
  it('a load of exactly two replicas needs two', () => {
    assert.deepEqual(tiersOf(loadOf(base, 'chat', 20)), ['floor', 'demand', 'surplus', 'surplus']);
  });
  it('no load: all beyond the floor are surplus', () => {
    assert.deepEqual(tiersOf(loadOf(base, 'chat', 0)), ['floor', 'surplus', 'surplus', 'surplus']);
  });
  it('unknown load calls none surplus', () => {
    assert.deepEqual(tiersOf(), ['floor', 'demand', 'demand', 'demand']);
  });
  it('a target throughput needs its replicas (250 tokens/s at 100 per replica)', () => {
    const s = { ...loadOf(base, 'chat', 0), models: [{ ...chat, target_tokens_per_sec: 250 }] };
    assert.deepEqual(tiersOf(s), ['floor', 'demand', 'demand', 'surplus']);
  });
  it('draining replicas have no claim', () => {
    const s = { ...base, replicas: [...serving(['c1', 'c2']), ...serving(['c3', 'c4'], 'draining')] };
    assert.deepEqual(tiersOf(s), ['floor', 'demand', 'none', 'none']);
  });
  it('carries the model priority and the place of the replica', () => {
    assert.deepEqual(claims(buildView(base)).get('c1'), { priority: 2, tier: 'floor', k: 1, of: 1 });
  });
  it('claimOf gives the claim claims() does; none for a draining replica or one of a model gone', () => {
    const s = {
      ...loadOf(base, 'chat', 25),
      replicas: [...serving(['c1', 'c2', 'c3']), ...serving(['c4'], 'draining')],
    };
    const view = buildView(s);
    const of = (r: (typeof s.replicas)[number]) => claimOf(view, r);
    assert.deepEqual(s.replicas.map(of), [
      ...s.replicas.slice(0, 3).map((r) => claims(view).get(r.id)),
      undefined,
    ]);
    assert.deepEqual(of(s.replicas[1]), { priority: 2, tier: 'demand', k: 2, of: 1 });
    const gone = buildView({ ...s, models: [] });
    assert.equal(claimOf(gone, s.replicas[0]), undefined);
    assert.equal(claims(gone).get('c1'), undefined);
  });
});

describe('nextClaim', () => {
  const m = model('m', [], { min_replicas: 2, priority: 1 });
  it('is floor up to min_replicas', () => {
    assert.deepEqual(nextClaim(m, 1), { priority: 1, tier: 'floor', k: 2, of: 2 });
  });
  it('is demand beyond it: something asks for the replica', () => {
    assert.deepEqual(nextClaim(m, 2), { priority: 1, tier: 'demand', k: 3, of: 2 });
  });
});
