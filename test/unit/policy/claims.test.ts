import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { claimOf, nextClaim } from '../../../src/policy/claims.ts';
import { buildView } from '../../../src/policy/view.ts';
import { gpus, loadOf, measured, model, node, profile, replica, world } from './fixtures.ts';

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
    const view = buildView(s);
    return view.snapshot.replicas.map((r) => claimOf(view, r)?.tier ?? 'none');
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
    const view = buildView(base);
    assert.deepEqual(claimOf(view, base.replicas[0]), { priority: 2, tier: 'floor', k: 1, of: 1 });
  });
  it('none for a draining replica or one of a model gone', () => {
    const s = {
      ...loadOf(base, 'chat', 25),
      replicas: [...serving(['c1', 'c2', 'c3']), ...serving(['c4'], 'draining')],
    };
    const view = buildView(s);
    assert.deepEqual(claimOf(view, s.replicas[1]), { priority: 2, tier: 'demand', k: 2, of: 1 });
    assert.equal(claimOf(view, s.replicas[3]), undefined);
    assert.equal(claimOf(buildView({ ...s, models: [] }), s.replicas[0]), undefined);
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
