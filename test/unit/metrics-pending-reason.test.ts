// The pending classes are read from the sentences the policy writes: these cases make real decisions,
// so a changed sentence fails here rather than turning every pending model into "other".
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Model } from '../../src/domain/model.ts';
import type { ModelMemory, Snapshot } from '../../src/domain/snapshot.ts';
import { pendingReasons } from '../../src/metrics/pending-reason.ts';
import { decideModel } from '../../src/policy/decide.ts';
import {
  gpus,
  loadOf,
  measured,
  memory,
  model,
  NOW,
  node,
  org,
  profile,
  quota,
  replica,
  world,
} from './policy/fixtures.ts';

const big = profile('big', gpus(4), { priority: 10 });
const small = profile('small', gpus(1));
const nodes = [node('gpu-1', gpus(2))];

function pendingOf(snapshot: Snapshot, subject: Model, mem: ModelMemory = memory()): string {
  const decision = decideModel(snapshot, subject.name, mem);
  assert.ok(decision.pending, `expected a pending decision, got: ${decision.reason}`);
  return decision.pending;
}

describe('pendingReasons', () => {
  it('no room: no node fits and the owner is not within a guarantee', () => {
    const m = model('m', [big]);
    assert.deepEqual(pendingReasons(pendingOf(loadOf(world({ models: [m], nodes }), 'm', 5), m)), [
      'no_room',
    ]);
  });

  it('limit: a limit on the owner chain stops every profile', () => {
    const m = model('m', [small], { owner: 'org:acme' });
    const s = world({
      scopes: [org('acme')],
      quotas: [quota('org:acme', undefined, gpus(0))],
      models: [m],
      nodes,
    });
    assert.deepEqual(pendingReasons(pendingOf(loadOf(s, 'm', 5), m)), ['limit']);
  });

  it('max_replicas: the model is at its maximum', () => {
    const m = model('m', [small], { max_replicas: 1 });
    const s = world({
      models: [m],
      nodes,
      replicas: [replica('r', { model: 'm', profile: small, node: 'gpu-1' })],
    });
    assert.deepEqual(pendingReasons(pendingOf(loadOf(s, 'm', 50), m)), ['max_replicas']);
  });

  it('backoff: the only profile is backed off after failed starts', () => {
    const m = model('m', [small]);
    const s = loadOf(world({ models: [m], nodes }), 'm', 5);
    assert.deepEqual(pendingReasons(pendingOf(s, m, memory(null, { small: NOW + 60_000 }))), ['backoff']);
  });

  it('unmeasured: only a target throughput asks, and no profile is measured', () => {
    const m = model('m', [small], { target_tokens_per_sec: 100 });
    assert.deepEqual(pendingReasons(pendingOf(world({ models: [m], nodes }), m)), ['unmeasured']);
  });

  it('slo_unmet: the only profile was measured as unable to meet its SLO', () => {
    const m = model('m', [small]);
    const s = loadOf(world({ models: [m], nodes, measurements: [measured('m', 'small', 0, 0)] }), 'm', 5);
    assert.deepEqual(pendingReasons(pendingOf(s, m)), ['slo_unmet']);
  });

  it('no_profile: the model has none', () => {
    const m = model('m', [], { min_replicas: 1 });
    assert.deepEqual(pendingReasons(pendingOf(world({ models: [m], nodes }), m)), ['no_profile']);
  });

  it('one class per reason when profiles wait for different things', () => {
    const m = model('m', [big, small], { owner: 'org:acme' });
    const full = [0, 1].map((i) => replica(`r${i}`, { model: 'm', profile: small, node: 'gpu-1' }));
    const s = (limit: number) =>
      loadOf(
        world({
          scopes: [org('acme')],
          quotas: [quota('org:acme', undefined, gpus(limit))],
          models: [m],
          nodes,
          replicas: full,
        }),
        'm',
        50,
      );
    assert.deepEqual(pendingReasons(pendingOf(s(2), m)), ['limit']);
    assert.deepEqual(pendingReasons(pendingOf(s(3), m)), ['no_room', 'limit']);
  });

  it('a sentence it does not know is "other", not free text', () => {
    assert.deepEqual(pendingReasons('waiting for something new'), ['other']);
  });
});
