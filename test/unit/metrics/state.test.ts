import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterNode } from '../../../src/domain/cluster.ts';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { stateFigures } from '../../../src/metrics/state-figures.ts';
import type { Sample, StateFigures } from '../../../src/metrics/state-gauge-definitions.ts';
import { decideModel } from '../../../src/policy/decide.ts';
import type { StoredDecision } from '../../../src/store/decisions.ts';
import {
  cores,
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
  team,
  world,
} from '../policy/fixtures.ts';

const h100 = profile('h100', gpus(2, { cores: 16 }), { gpu_model: 'H100' });
const chat = model('chat', [h100], { owner: 'team:ml' });
const idle = model('idle', [profile('cpu', cores(4))], { owner: 'team:web' });

/**
 * Team ml (guarantee 2 GPUs, limit 4 GPUs and 64 cores) runs two chat replicas: the first is within
 * its guarantee, the second borrowed, and a third would pass the limit. One of two nodes is cordoned.
 */
const scene: Snapshot = loadOf(
  world({
    scopes: [org('acme', 'Acme'), team('ml', 'acme'), team('web', 'acme'), org('beta', 'Beta')],
    quotas: [
      quota('team:ml', gpus(2), gpus(4, { cores: 64 })),
      quota('team:web', gpus(6)),
      quota('org:beta', gpus(3, { cores: 10 })),
    ],
    models: [chat, idle],
    measurements: [measured('chat', 'h100', 10, 1000)],
    nodes: [
      node('gpu-1', gpus(8, { cores: 96, memory_gib: 512 }), { gpu_model: 'H100' }),
      node('gpu-2', gpus(8, { cores: 96 }), { gpu_model: 'H100', state: 'cordoned' }),
    ],
    replicas: [
      replica('r1', { model: 'chat', profile: h100, node: 'gpu-1' }),
      replica('r2', { model: 'chat', profile: h100, node: 'gpu-1' }, { state: 'starting' }),
    ],
  }),
  'chat',
  30,
);

/** The models' newest decisions as the store keeps them (recordDecision puts `pending` in the inputs). */
function newestDecisions(s: Snapshot): Map<string, StoredDecision> {
  return new Map(
    s.models.map((m) => {
      const d = decideModel(s, m.name, memory());
      const inputs = { ...d.inputs, pending: d.pending ?? null };
      return [m.name, { at: '2024-01-01T00:00:00Z', action: d.action, reason: d.reason, inputs }];
    }),
  );
}

const figures = stateFigures(scene, newestDecisions(scene), new Map());
const values = (samples: Sample[], labels: Record<string, string>) =>
  samples
    .filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v))
    .map((s) => [s.labels.resource ?? s.labels.state, s.value]);
const gauge = (name: keyof StateFigures, labels: Record<string, string> = {}) =>
  Object.fromEntries(values(figures[name], labels));

describe('state gauges from one snapshot', () => {
  it('quota figures only for scopes with a quota; guarantee and limit on the dimensions they set', () => {
    const scopes = new Set(figures.llmgw_quota_holds.map((s) => s.labels.scope));
    assert.deepEqual([...scopes].sort(), ['org:beta', 'team:ml', 'team:web']);
    assert.deepEqual(gauge('llmgw_quota_guarantee', { scope: 'team:ml' }), { gpus: 2 });
    assert.deepEqual(gauge('llmgw_quota_limit', { scope: 'team:ml' }), { gpus: 4, cores: 64 });
    assert.deepEqual(gauge('llmgw_quota_limit', { scope: 'team:web' }), {});
    assert.equal(
      figures.llmgw_quota_holds.find((s) => s.labels.scope === 'team:ml')?.labels.name,
      'Acme / ml',
    );
  });

  it('holds and borrowed on every dimension, as scopeFigures counts them', () => {
    assert.deepEqual(gauge('llmgw_quota_holds', { scope: 'team:ml' }), { gpus: 4, cores: 32, memory_gib: 0 });
    assert.deepEqual(gauge('llmgw_quota_borrowed', { scope: 'team:ml' }), {
      gpus: 2,
      cores: 16,
      memory_gib: 0,
    });
    assert.deepEqual(gauge('llmgw_quota_holds', { scope: 'org:beta' }), { gpus: 0, cores: 0, memory_gib: 0 });
  });

  it('replicas by profile and active state, zero included', () => {
    assert.deepEqual(gauge('llmgw_model_replicas', { model: 'chat', profile: 'h100' }), {
      pending: 0,
      starting: 1,
      ready: 1,
      draining: 0,
    });
  });

  it('in flight when the load is known, and capacity at SLO', () => {
    assert.deepEqual(values(figures.llmgw_model_in_flight, {}), [[undefined, 30]]);
    assert.deepEqual(
      figures.llmgw_model_capacity_at_slo.map((s) => [s.labels.model, s.value]),
      [
        ['chat', 20],
        ['idle', 0],
      ],
    );
  });

  it('a model a limit stops is pending for "limit" and names the scope and resource', () => {
    assert.deepEqual(figures.llmgw_model_pending, [{ labels: { model: 'chat', reason: 'limit' }, value: 1 }]);
    assert.deepEqual(figures.llmgw_model_blocked_by_limit, [
      { labels: { model: 'chat', scope: 'team:ml', name: 'Acme / ml', resource: 'gpus' }, value: 1 },
    ]);
  });

  it('a decision stored before codes (its pending a sentence) is pending for "other" until the next pass', () => {
    const stored = newestDecisions(scene).get('chat')!;
    const older = {
      ...stored,
      inputs: { ...stored.inputs, pending: 'a limit of team Acme / ml stops h100' },
    };
    const before = stateFigures(scene, new Map([['chat', older]]), new Map());
    assert.deepEqual(before.llmgw_model_pending, [{ labels: { model: 'chat', reason: 'other' }, value: 1 }]);
    assert.deepEqual(before.llmgw_model_blocked_by_limit, []);
  });

  it('a model whose newest decision is not pending has neither', () => {
    const settled = stateFigures(scene, new Map(), new Map());
    assert.deepEqual(settled.llmgw_model_pending, []);
    assert.deepEqual(settled.llmgw_model_blocked_by_limit, []);
  });

  it('cluster capacity counts ready nodes; guarantees nested in another count once', () => {
    assert.deepEqual(gauge('llmgw_cluster_capacity'), { gpus: 8, cores: 96, memory_gib: 512 });
    // Acme promises what its teams do (2 + 6 GPUs); Beta its own 3 GPUs and 10 cores.
    assert.deepEqual(gauge('llmgw_cluster_guaranteed'), { gpus: 11, cores: 10, memory_gib: 0 });
    const orgCovers = { ...scene, quotas: [...scene.quotas, quota('org:acme', gpus(20))] };
    const covered = Object.fromEntries(
      stateFigures(orgCovers, new Map(), new Map()).llmgw_cluster_guaranteed.map((s) => [
        s.labels.resource,
        s.value,
      ]),
    );
    assert.equal(covered.gpus, 23);
  });

  it('a node is overcommitted while what runs there exceeds its capacity, and reservations do not count', () => {
    const on = (id: string, state: 'pending' | 'draining' | 'ready') =>
      replica(id, { model: 'chat', profile: profile('x4', gpus(4)), node: 'gpu-1' }, { state });
    const overcommitted = (replicas: Snapshot['replicas']) =>
      stateFigures({ ...scene, replicas }, new Map(), new Map()).llmgw_node_overcommitted.map((s) => [
        s.labels.node,
        s.value,
      ]);
    // gpu-1 has 8 GPUs: 4 ready + 4 draining run there; a reservation waiting beside them holds no GPU yet.
    assert.deepEqual(overcommitted([on('a', 'ready'), on('b', 'draining'), on('c', 'pending')]), [
      ['gpu-1', 0],
      ['gpu-2', 0],
    ]);
    assert.deepEqual(overcommitted([on('a', 'ready'), on('b', 'draining'), on('c', 'ready')]), [
      ['gpu-1', 1],
      ['gpu-2', 0],
    ]);
  });

  describe('nodes', () => {
    const agent = (name: string, state: ClusterNode['state']): ClusterNode => ({
      ...node(name, gpus(8), { state }),
      driver: 'agent',
    });
    const nodes: ClusterNode[] = [
      { ...node('sim-1', gpus(8)), driver: 'sim' },
      node('sim-down', gpus(8), { state: 'down' }),
      agent('agent-ready', 'ready'),
      agent('agent-lost', 'lost'),
      agent('agent-cordoned', 'cordoned'),
      agent('agent-new', 'ready'),
      agent('agent-ahead', 'ready'),
    ];
    const heartbeats = new Map([
      ['agent-ready', NOW - 4000],
      ['agent-lost', NOW - 90_000],
      ['agent-cordoned', NOW - 2500],
      // Stamped by a database clock ahead of this one.
      ['agent-ahead', NOW + 1500],
      // A simulated node has no agent: a heartbeat there, were one stored, is not one.
      ['sim-1', NOW - 1000],
    ]);
    const nodeFigures = stateFigures(world({ nodes }), new Map(), heartbeats);
    const states = (name: string) =>
      Object.fromEntries(
        nodeFigures.llmgw_node_state
          .filter((s) => s.labels.node === name)
          .map((s) => [s.labels.state, s.value]),
      );

    it('one series per node and known state: 1 for the state it is in, 0 for the others', () => {
      assert.deepEqual(states('sim-1'), { ready: 1, cordoned: 0, down: 0, lost: 0 });
      assert.deepEqual(states('sim-down'), { ready: 0, cordoned: 0, down: 1, lost: 0 });
      assert.deepEqual(states('agent-ready'), { ready: 1, cordoned: 0, down: 0, lost: 0 });
      assert.deepEqual(states('agent-lost'), { ready: 0, cordoned: 0, down: 0, lost: 1 });
      assert.deepEqual(states('agent-cordoned'), { ready: 0, cordoned: 1, down: 0, lost: 0 });
      assert.deepEqual(states('agent-new'), { ready: 1, cordoned: 0, down: 0, lost: 0 });
      assert.equal(nodeFigures.llmgw_node_state.length, nodes.length * 4);
    });

    it("driver is the node's, sim when it names none", () => {
      const drivers = Object.fromEntries(
        nodeFigures.llmgw_node_state.map((s) => [s.labels.node, s.labels.driver]),
      );
      assert.deepEqual(drivers, {
        'sim-1': 'sim',
        'sim-down': 'sim',
        'agent-ready': 'agent',
        'agent-lost': 'agent',
        'agent-cordoned': 'agent',
        'agent-new': 'agent',
        'agent-ahead': 'agent',
      });
    });

    it("heartbeat age for the agents' nodes heard from, lost or not; none for sim nodes nor agents never heard from", () => {
      assert.deepEqual(
        nodeFigures.llmgw_node_heartbeat_age_seconds.map((s) => [s.labels, s.value]),
        [
          [{ node: 'agent-ready' }, 4],
          [{ node: 'agent-lost' }, 90],
          [{ node: 'agent-cordoned' }, 2.5],
          [{ node: 'agent-ahead' }, 0],
        ],
      );
    });
  });
});
