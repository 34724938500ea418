// llmgw_model_pending's `reason` is the code a decision stores, read back as the store keeps it (JSON):
// these cases make real decisions, so every code the policy can say is seen here.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Model } from '../../../src/domain/model.ts';
import type { ModelMemory, Snapshot } from '../../../src/domain/snapshot.ts';
import { pendingLabels } from '../../../src/metrics/model-series.ts';
import { decideModel } from '../../../src/policy/decide.ts';
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
} from '../policy/fixtures.ts';

const big = profile('big', gpus(4), { priority: 10 });
const small = profile('small', gpus(1));
const nodes = [node('gpu-1', gpus(2))];

/** The labels of the decision's `pending` after a round trip through the store's JSON. */
function labelsOf(snapshot: Snapshot, subject: Model, mem: ModelMemory = memory()): string[] {
  const decision = decideModel(snapshot, subject.name, mem);
  assert.ok(decision.pending, `expected a pending decision, got: ${decision.reason}`);
  return pendingLabels(JSON.parse(JSON.stringify(decision.pending)));
}

describe('pendingLabels of real decisions', () => {
  it('no_room: no node fits and the owner is not within a guarantee', () => {
    const m = model('m', [big]);
    assert.deepEqual(labelsOf(loadOf(world({ models: [m], nodes }), 'm', 5), m), ['no_room']);
  });

  it('limit: a limit on the owner chain stops every profile', () => {
    const m = model('m', [small], { owner: 'org:acme' });
    const s = world({
      scopes: [org('acme')],
      quotas: [quota('org:acme', undefined, gpus(0))],
      models: [m],
      nodes,
    });
    assert.deepEqual(labelsOf(loadOf(s, 'm', 5), m), ['limit']);
  });

  it("yields: the limit's room is left to a sibling of a higher claim", () => {
    const m = model('m', [small], { owner: 'org:acme', min_replicas: 2, max_replicas: 2 });
    const sibling = model('sibling', [small], { owner: 'org:acme', min_replicas: 1 });
    const s = world({
      scopes: [org('acme')],
      quotas: [quota('org:acme', undefined, gpus(2))],
      models: [m, sibling],
      nodes,
      replicas: [replica('r', { model: 'm', profile: small, node: 'gpu-1' })],
    });
    assert.deepEqual(labelsOf(s, m), ['yields']);
  });

  it('max_replicas: the model is at its maximum', () => {
    const m = model('m', [small], { max_replicas: 1 });
    const s = world({
      models: [m],
      nodes,
      replicas: [replica('r', { model: 'm', profile: small, node: 'gpu-1' })],
    });
    assert.deepEqual(labelsOf(loadOf(s, 'm', 50), m), ['max_replicas']);
  });

  it('backoff: the only profile is backed off after failed starts', () => {
    const m = model('m', [small]);
    const s = loadOf(world({ models: [m], nodes }), 'm', 5);
    assert.deepEqual(labelsOf(s, m, memory(null, { small: NOW + 60_000 })), ['backoff']);
  });

  it('unmeasured: only a target throughput asks, and no profile is measured', () => {
    const m = model('m', [small], { target_tokens_per_sec: 100 });
    assert.deepEqual(labelsOf(world({ models: [m], nodes }), m), ['unmeasured']);
  });

  it('slo_unmet: the only profile was measured as unable to meet its SLO', () => {
    const m = model('m', [small]);
    const s = loadOf(world({ models: [m], nodes, measurements: [measured('m', 'small', 0, 0)] }), 'm', 5);
    assert.deepEqual(labelsOf(s, m), ['slo_unmet']);
  });

  it('no_profile: the model has none', () => {
    const m = model('m', [], { min_replicas: 1 });
    assert.deepEqual(labelsOf(world({ models: [m], nodes }), m), ['no_profile']);
  });

  it('one label per code when profiles wait for different things, in trial order', () => {
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
    assert.deepEqual(labelsOf(s(2), m), ['limit']);
    assert.deepEqual(labelsOf(s(3), m), ['limit', 'no_room']);
  });
});

describe('pendingLabels of what the store may hold', () => {
  const cases: { name: string; pending: unknown; labels: string[] }[] = [
    { name: 'waits for nothing (null)', pending: null, labels: [] },
    { name: 'waits for nothing (absent: a note)', pending: undefined, labels: [] },
    {
      name: 'a code twice is one label',
      pending: [{ code: 'backoff' }, { code: 'backoff' }],
      labels: ['backoff'],
    },
    {
      name: 'a decision stored before codes (a sentence) is "other"',
      pending: 'no room for big (needs 4 GPUs)',
      labels: ['other'],
    },
    {
      name: 'a code this version does not know is "other", beside the ones it knows',
      pending: [{ code: 'limit' }, { code: 'waiting_for_godot' }, { nothing: 1 }],
      labels: ['limit', 'other'],
    },
    { name: 'a stored list with nothing in it is "other"', pending: [], labels: ['other'] },
  ];
  for (const c of cases) {
    it(c.name, () => assert.deepEqual(pendingLabels(c.pending), c.labels));
  }
});
