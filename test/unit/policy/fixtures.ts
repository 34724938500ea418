// Builders for policy tests: a snapshot in a few lines, and the effect of a decision on it.
import type { ClusterNode, Replica, ReplicaState } from '../../../src/domain/cluster.ts';
import type { Decision } from '../../../src/domain/decision.ts';
import type { Measurement, Model, Profile } from '../../../src/domain/model.ts';
import type { Quota } from '../../../src/domain/quota.ts';
import type { Resources } from '../../../src/domain/resources.ts';
import type { Scope, ScopeKey } from '../../../src/domain/scope.ts';
import {
  DEFAULT_POLICY_SETTINGS,
  EMPTY_MEMORY,
  type ModelMemory,
  type Snapshot,
} from '../../../src/domain/snapshot.ts';

export const NOW = 1_700_000_000_000;
export const SECOND = 1000;

export const org = (id: string, name = id): Scope => ({
  key: `org:${id}`,
  kind: 'org',
  id,
  name,
  parent: null,
});
export const team = (id: string, orgId: string, name = id): Scope => ({
  key: `team:${id}`,
  kind: 'team',
  id,
  name,
  parent: `org:${orgId}`,
});
export const project = (id: string, teamId: string, name = id): Scope => ({
  key: `project:${id}`,
  kind: 'project',
  id,
  name,
  parent: `team:${teamId}`,
});

/**
 * The scope tree policy tests share: org Acme > team ml > projects training and serving; org Beta >
 * team web. People read them "team Acme / ml", "project Acme/ml/training". A scope without a quota
 * changes no decision, so a test sets only the quotas it needs.
 */
export const SCOPES: Scope[] = [
  org('acme', 'Acme'),
  team('ml', 'acme'),
  project('training', 'ml'),
  project('serving', 'ml'),
  org('beta', 'Beta'),
  team('web', 'beta'),
];

export const quota = (scope: ScopeKey, guarantee?: Resources, limit?: Resources): Quota => ({
  scope,
  ...(guarantee && { guarantee }),
  ...(limit && { limit }),
});

/** `gpus(4, { cores: 8 })` -> { gpus: 4, cores: 8 }. */
export const gpus = (n: number, more: Resources = {}): Resources => ({ gpus: n, ...more });
export const cores = (n: number, more: Resources = {}): Resources => ({ cores: n, ...more });

export const node = (
  name: string,
  capacity: Resources,
  options: { gpu_model?: string; state?: ClusterNode['state'] } = {},
): ClusterNode => ({
  name,
  capacity,
  gpu_model: options.gpu_model ?? null,
  labels: {},
  state: options.state ?? 'ready',
});

export const profile = (
  name: string,
  resources: Resources,
  options: Partial<Omit<Profile, 'name' | 'resources'>> = {},
): Profile => ({ name, priority: 0, resources, ...options });

export const model = (
  name: string,
  profiles: Profile[],
  options: Partial<Omit<Model, 'name' | 'profiles'>> = {},
): Model => ({ name, owner: null, min_replicas: 0, max_replicas: 10, profiles, ...options });

let created = NOW - 1_000_000;
/** A replica; without `created_at` each one is newer than the one built before it. */
export const replica = (
  id: string,
  of: { model: string; profile: Profile; node: string },
  options: { state?: ReplicaState; created_at?: number } = {},
): Replica => ({
  id,
  model: of.model,
  profile: of.profile.name,
  node: of.node,
  resources: of.profile.resources,
  state: options.state ?? 'ready',
  created_at: options.created_at ?? created++,
});

export const measured = (
  modelName: string,
  profileName: string,
  concurrency: number,
  tokensPerSec: number,
): Measurement => ({
  model: modelName,
  profile: profileName,
  max_concurrency_at_slo: concurrency,
  throughput_tok_per_sec: tokensPerSec,
  slo: { ttft_p95_ms: 500 },
  measured_at: '2024-01-01T00:00:00Z',
});

export const world = (parts: Partial<Snapshot>): Snapshot => ({
  now: NOW,
  scopes: [],
  quotas: [],
  models: [],
  measurements: [],
  nodes: [],
  replicas: [],
  load: {},
  settings: DEFAULT_POLICY_SETTINGS,
  ...parts,
});

/**
 * Replicas across the shared tree: project training runs two of 2 GPUs (its guarantee of 2 GPUs
 * protects the older), project serving one of 8 cores, a model without owner one of 1 GPU; org Beta,
 * limited to 4 GPUs, runs nothing.
 */
export function spreadScene(): Snapshot {
  const [g1, g2, c8] = [profile('g1', gpus(1)), profile('g2', gpus(2)), profile('c8', cores(8))];
  return world({
    scopes: SCOPES,
    quotas: [quota('project:training', gpus(2)), quota('org:beta', undefined, gpus(4))],
    models: [
      model('train', [g2], { owner: 'project:training' }),
      model('serve', [c8], { owner: 'project:serving' }),
      model('free', [g1]),
    ],
    nodes: [node('n', gpus(16, { cores: 64 }))],
    replicas: [
      replica('t1', { model: 'train', profile: g2, node: 'n' }),
      replica('t2', { model: 'train', profile: g2, node: 'n' }),
      replica('s1', { model: 'serve', profile: c8, node: 'n' }),
      replica('f1', { model: 'free', profile: g1, node: 'n' }),
    ],
  });
}

/** Load of a model reported `ageMs` before the snapshot's time. */
export const loadOf = (s: Snapshot, modelName: string, inFlight: number, ageMs = 0): Snapshot => ({
  ...s,
  load: { ...s.load, [modelName]: { in_flight: inFlight, waiting: 0, reported_at: s.now - ageMs } },
});

export const memory = (
  scaleDownSince: number | null = null,
  backedOffUntil: Record<string, number> = {},
): ModelMemory => ({
  ...EMPTY_MEMORY,
  scaleDownSince,
  backedOffUntil,
});

export const later = (s: Snapshot, ms: number): Snapshot => ({ ...s, now: s.now + ms });

let placed = 0;
/**
 * The snapshot after the decision is carried out the way the activities do it: a placed or reserved
 * replica starts pending (created now), victims and removed replicas are draining (the victims of a
 * preemption for the decision's model; every victim for the replica reserved in its place).
 */
export function apply(s: Snapshot, d: Decision): Snapshot {
  const drain = new Set(d.action === 'remove' ? [d.replica!] : (d.victims ?? []).map((v) => v.replica));
  const preemptedFor = d.action === 'preempt' ? d.model : null;
  const reserves = d.action === 'place' || d.action === 'reclaim' || d.action === 'preempt';
  const id = reserves ? `${d.model}-new-${String(++placed).padStart(8, '0')}` : '';
  const reclaimedFor = d.action === 'remove' ? null : id;
  const replicas = s.replicas.map((r) =>
    drain.has(r.id)
      ? { ...r, state: 'draining' as const, preempted_for: preemptedFor, reclaimed_for: reclaimedFor }
      : r,
  );
  if (reserves) {
    replicas.push({
      id,
      model: d.model,
      profile: d.profile!,
      node: d.node!,
      resources: d.resources!,
      state: 'pending',
      // The reservation lock serialises reservations and the store stamps each in microseconds: each
      // is newer than the one before, even within one millisecond.
      created_at: s.now + placed / 1000,
    });
  }
  return { ...s, replicas };
}

/** Every start finished and every drain done: pending/starting -> ready, draining -> stopped. */
export const settle = (s: Snapshot): Snapshot => ({
  ...s,
  replicas: s.replicas.map((r) => ({
    ...r,
    state:
      r.state === 'pending' || r.state === 'starting'
        ? 'ready'
        : r.state === 'draining'
          ? 'stopped'
          : r.state,
  })),
});

export const withOwner = (s: Snapshot, modelName: string, owner: ScopeKey | null): Snapshot => ({
  ...s,
  models: s.models.map((m) => (m.name === modelName ? { ...m, owner } : m)),
});

// The scene of one model's pass that the tests of decide, scaling, scale-down and choose-profile share:
// chat, owned by team Acme / ml (guaranteed 8 GPUs, limited to 16), prefers vllm-h100 (measured: 10 in
// flight at SLO, 1000 tokens/s) to cpu-llama (4 declared, unmeasured); three H100 nodes and a CPU node.
export const h100 = profile('vllm-h100', gpus(2, { cores: 16 }), { priority: 10, gpu_model: 'H100' });
export const cpuLlama = profile('cpu-llama', cores(16), { default_concurrency: 4 });
export const chat = model('chat', [h100, cpuLlama], { owner: 'team:ml', max_replicas: 6 });
export const chatNodes = [
  node('gpu-1', gpus(8, { cores: 96 }), { gpu_model: 'H100' }),
  node('gpu-2', gpus(8, { cores: 96 }), { gpu_model: 'H100' }),
  node('gpu-3', gpus(8, { cores: 96 }), { gpu_model: 'H100' }),
  node('cpu-1', cores(64)),
];

/** A replica of `of` (chat unless told) on node `on`, newer than every replica built before it. */
export const replicaOn = (
  id: string,
  p: Profile,
  on: string,
  state: ReplicaState = 'ready',
  of: Model = chat,
): Replica => replica(id, { model: of.name, profile: p, node: on }, { state });

/** Three ready vllm-h100 replicas of chat (C = 30, 3000 tokens/s): gpu-1 keeps 4 GPUs free, gpu-2 6. */
export const threeChatReplicas = (): Replica[] => [
  replicaOn('r1', h100, 'gpu-1'),
  replicaOn('r2', h100, 'gpu-1'),
  replicaOn('r3', h100, 'gpu-2'),
];

/** chat's scene, with `inFlight` reported `loadAge` ms ago when given; `parts` replace the rest. */
export function chatScene(parts: Partial<Snapshot> & { inFlight?: number; loadAge?: number } = {}): Snapshot {
  const { inFlight, loadAge, ...rest } = parts;
  const s = world({
    scopes: SCOPES,
    quotas: [quota('team:ml', gpus(8), gpus(16))],
    models: [chat],
    measurements: [measured('chat', 'vllm-h100', 10, 1000)],
    nodes: chatNodes,
    replicas: threeChatReplicas(),
    ...rest,
  });
  return inFlight === undefined ? s : loadOf(s, 'chat', inFlight, loadAge);
}

/**
 * A memory without what the model learned of its load (policy/load-growth.ts): the window and backoff
 * that these tests are about, whatever growth the passes observed.
 */
export const windowOf = <M extends { growth?: unknown; scaleDownPeak?: unknown }>(m: M) => {
  const { growth: _growth, scaleDownPeak: _peak, ...rest } = m;
  return rest;
};
