// One full decision pass (every model's decision plus the per-scope figures) on a large snapshot:
// the 1,213 GPU nodes of the Alibaba 2023 trace, 300 scopes, 1,000 models, 5,000 replicas, load for
// every model. Timed at 1/8, 1/4, 1/2 and the full size to show how a pass grows, with preemption off
// and on.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ClusterNode, Replica, ReplicaState } from '../../src/domain/cluster.ts';
import type { DecisionAction } from '../../src/domain/decision.ts';
import type { Measurement, Model, Profile } from '../../src/domain/model.ts';
import type { Quota } from '../../src/domain/quota.ts';
import type { Resources } from '../../src/domain/resources.ts';
import type { Scope, ScopeKey } from '../../src/domain/scope.ts';
import { DEFAULT_POLICY_SETTINGS, EMPTY_MEMORY, type Snapshot } from '../../src/domain/snapshot.ts';
import { decideModel } from '../../src/policy/decide.ts';
import { fitsWithin, subtract } from '../../src/policy/resources.ts';
import { scopeFigures } from '../../src/policy/scope-figures.ts';
import { buildView } from '../../src/policy/view.ts';

const here = dirname(fileURLToPath(import.meta.url));
// The trace lives next to the repository, never inside it.
const NODE_LIST = join(
  here,
  '..',
  '..',
  '..',
  'shared',
  'data',
  'alibaba-gpu-2023',
  'openb_node_list_gpu_node.csv',
);
const FULL = { scopes: 300, models: 1000, replicas: 5000 };
const NOW = Date.UTC(2025, 0, 1);
const PASSES = 20;
const WARM_UP = 3;

/** mulberry32: a small seeded PRNG so that runs are comparable. */
function prng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (min: number, max: number) => min + Math.floor(next() * (max - min + 1));
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)];
  return { next, int, pick };
}

function readNodes(): ClusterNode[] {
  const [, ...rows] = readFileSync(NODE_LIST, 'utf8').trim().split('\n');
  return rows.map((row) => {
    const [sn, cpuMilli, memoryMib, gpu, gpuModel] = row.split(',');
    return {
      name: sn,
      capacity: { gpus: Number(gpu), cores: Number(cpuMilli) / 1000, memory_gib: Number(memoryMib) / 1024 },
      gpu_model: gpuModel,
      labels: {},
      state: 'ready',
    };
  });
}

/** 5% orgs, 20% teams, the rest projects; about half of them with a quota. */
function tenancy(count: number, rand: ReturnType<typeof prng>, gpusInCluster: number) {
  const orgs = Math.max(1, Math.round(count * 0.05));
  const teams = Math.max(1, Math.round(count * 0.2));
  const scopes: Scope[] = [];
  for (let i = 0; i < orgs; i++)
    scopes.push({ key: `org:o${i}`, kind: 'org', id: `o${i}`, name: `Org${i}`, parent: null });
  for (let i = 0; i < teams; i++) {
    scopes.push({
      key: `team:t${i}`,
      kind: 'team',
      id: `t${i}`,
      name: `team${i}`,
      parent: `org:o${i % orgs}`,
    });
  }
  for (let i = 0; scopes.length < count; i++) {
    scopes.push({
      key: `project:p${i}`,
      kind: 'project',
      id: `p${i}`,
      name: `proj${i}`,
      parent: `team:t${i % teams}`,
    });
  }
  const share = { org: gpusInCluster / orgs, team: gpusInCluster / teams, project: gpusInCluster / count };
  const quotas: Quota[] = [];
  for (const scope of scopes) {
    if (rand.next() < 0.5) continue;
    const guarantee = Math.round(share[scope.kind] * (0.2 + rand.next() * 0.5));
    const limit = Math.round(share[scope.kind] * (0.8 + rand.next()));
    quotas.push({
      scope: scope.key,
      ...(rand.next() < 0.8 && { guarantee: { gpus: guarantee } }),
      ...(rand.next() < 0.7 && { limit: { gpus: Math.max(limit, guarantee), cores: limit * 16 } }),
    });
  }
  return { scopes, quotas };
}

function catalogue(count: number, scopes: Scope[], gpuModels: string[], rand: ReturnType<typeof prng>) {
  const models: Model[] = [];
  const measurements: Measurement[] = [];
  for (let i = 0; i < count; i++) {
    const name = `model-${i}`;
    const gpus = rand.pick([1, 1, 1, 1, 2]);
    const profiles: Profile[] = [
      {
        name: 'gpu',
        priority: 10,
        resources: { gpus, cores: 4 * gpus, memory_gib: 16 * gpus },
        ...(rand.next() < 0.3 && { gpu_model: rand.pick(gpuModels) }),
      },
      { name: 'gpu-any', priority: 5, resources: { gpus, cores: 8 * gpus, memory_gib: 24 * gpus } },
    ];
    if (rand.next() < 0.5)
      profiles.push({ name: 'cpu', priority: 0, resources: { cores: 16, memory_gib: 32 } });
    for (const p of profiles) {
      if (rand.next() < 0.8) {
        const tokens = p.resources.gpus ? 600 * p.resources.gpus : 60;
        measurements.push({
          model: name,
          profile: p.name,
          max_concurrency_at_slo: rand.int(4, 32),
          throughput_tok_per_sec: tokens * (0.5 + rand.next()),
          slo: { ttft_p95_ms: 500 },
          measured_at: '2025-01-01T00:00:00Z',
        });
      }
    }
    const owner: ScopeKey | null = rand.next() < 0.05 ? null : rand.pick(scopes).key;
    models.push({
      name,
      owner,
      min_replicas: rand.int(0, 1),
      max_replicas: rand.int(4, 12),
      ...(rand.next() < 0.1 && { target_tokens_per_sec: rand.int(1000, 8000) }),
      profiles,
    });
  }
  return { models, measurements };
}

/** Places replicas of random models on random nodes with room, until `count` are placed. */
function fleet(
  count: number,
  models: Model[],
  nodes: ClusterNode[],
  rand: ReturnType<typeof prng>,
): Replica[] {
  const free = new Map(nodes.map((n) => [n.name, { ...n.capacity } as Resources]));
  const replicas: Replica[] = [];
  const perModel = new Map<string, number>();
  const states: ReplicaState[] = [
    'ready',
    'ready',
    'ready',
    'ready',
    'ready',
    'ready',
    'starting',
    'pending',
    'draining',
  ];
  for (let tries = 0; replicas.length < count && tries < count * 50; tries++) {
    const model = rand.pick(models);
    if ((perModel.get(model.name) ?? 0) >= model.max_replicas) continue;
    const profile = rand.next() < 0.8 ? model.profiles[0] : rand.pick(model.profiles);
    const node = rand.pick(nodes);
    if (profile.gpu_model && profile.gpu_model !== node.gpu_model) continue;
    const room = free.get(node.name)!;
    if (!fitsWithin(profile.resources, room)) continue;
    free.set(node.name, subtract(room, profile.resources));
    perModel.set(model.name, (perModel.get(model.name) ?? 0) + 1);
    replicas.push({
      id: `r-${replicas.length}`,
      model: model.name,
      profile: profile.name,
      node: node.name,
      resources: profile.resources,
      state: rand.pick(states),
      created_at: NOW - rand.int(0, 86_400_000),
    });
  }
  return replicas;
}

function buildSnapshot(fraction: number, allNodes: ClusterNode[]): Snapshot {
  const rand = prng(20_240_601);
  const nodes = allNodes.filter((_, i) => i % Math.round(1 / fraction) === 0 || fraction === 1);
  const gpusInCluster = nodes.reduce((total, n) => total + (n.capacity.gpus ?? 0), 0);
  const { scopes, quotas } = tenancy(Math.round(FULL.scopes * fraction), rand, gpusInCluster);
  const gpuModels = [...new Set(nodes.map((n) => n.gpu_model!))];
  const { models, measurements } = catalogue(Math.round(FULL.models * fraction), scopes, gpuModels, rand);
  const replicas = fleet(Math.round(FULL.replicas * fraction), models, nodes, rand);
  const load: Snapshot['load'] = {};
  for (const m of models) {
    const serving = replicas.filter((r) => r.model === m.name).length;
    load[m.name] = {
      in_flight: rand.int(0, 20 * (serving + 1)),
      waiting: rand.int(0, 5),
      reported_at: NOW - rand.int(0, 90_000),
    };
  }
  return {
    now: NOW,
    scopes,
    quotas,
    models,
    measurements,
    nodes,
    replicas,
    load,
    settings: DEFAULT_POLICY_SETTINGS,
  };
}

/** Every model as if its scale-down condition had held for the window, so that removals are timed too. */
const MEMORY = { ...EMPTY_MEMORY, scaleDownSince: NOW - DEFAULT_POLICY_SETTINGS.scaleDownWindowMs };

/** A pass as a worker makes it: one view shared by every model's decision and the scope figures. */
function pass(snapshot: Snapshot) {
  const view = buildView(snapshot);
  const actions: Record<DecisionAction, number> = { place: 0, reclaim: 0, preempt: 0, remove: 0, none: 0 };
  for (const model of snapshot.models) actions[decideModel(view, model.name, MEMORY).action]++;
  scopeFigures(view);
  return actions;
}

/**
 * The snapshot with preemption off (every quota says "never", as before it existed) or on (the
 * default), models then drawing priorities 0-2 from a PRNG of their own, so the snapshot is the same.
 */
function withPreemption(snapshot: Snapshot, on: boolean): Snapshot {
  if (!on) {
    const scopes = snapshot.scopes.map((s) => s.key);
    const quotas = new Map(snapshot.quotas.map((q) => [q.scope, q]));
    return {
      ...snapshot,
      quotas: scopes.map((scope) => ({ ...(quotas.get(scope) ?? { scope }), preemption: 'never' as const })),
    };
  }
  const rand = prng(7);
  return {
    ...snapshot,
    models: snapshot.models.map((m) => ({ ...m, priority: rand.pick([0, 0, 0, 1, 2]) })),
  };
}

const allNodes = readNodes();
const rows: {
  size: string;
  preemption: 'off' | 'on';
  nodes: number;
  scopes: number;
  models: number;
  replicas: number;
  ms: number;
  actions: string;
  preempts: number;
}[] = [];
for (const [size, fraction] of [
  ['1/8', 1 / 8],
  ['1/4', 1 / 4],
  ['1/2', 1 / 2],
  ['1', 1],
] as const) {
  const built = buildSnapshot(fraction, allNodes);
  for (const preemption of ['off', 'on'] as const) {
    const snapshot = withPreemption(built, preemption === 'on');
    const actions = pass(snapshot); // the mix of decisions
    for (let i = 1; i < WARM_UP; i++) pass(snapshot);
    const times: number[] = [];
    for (let i = 0; i < PASSES; i++) {
      const start = performance.now();
      pass(snapshot);
      times.push(performance.now() - start);
    }
    rows.push({
      size,
      preemption,
      nodes: snapshot.nodes.length,
      scopes: snapshot.scopes.length,
      models: snapshot.models.length,
      replicas: snapshot.replicas.length,
      // The fastest pass: the least disturbed by whatever else the machine runs, so runs compare.
      ms: Math.min(...times),
      actions: Object.entries(actions)
        .map(([action, n]) => `${action} ${n}`)
        .join(', '),
      preempts: actions.preempt,
    });
  }
}

const pad = (value: string | number, width: number) => String(value).padStart(width);
console.log(`policy pass: fastest of ${PASSES} passes (view + every model's decision + scope figures)`);
console.log(
  `${pad('size', 5)} ${pad('preempt', 7)} ${pad('nodes', 6)} ${pad('scopes', 6)} ${pad('models', 6)} ${pad('replicas', 8)} ${pad('ms/pass', 9)} ${pad('ms/decision', 11)}  decisions`,
);
for (const r of rows) {
  console.log(
    `${pad(r.size, 5)} ${pad(r.preemption, 7)} ${pad(r.nodes, 6)} ${pad(r.scopes, 6)} ${pad(r.models, 6)} ${pad(r.replicas, 8)} ` +
      `${pad(r.ms.toFixed(1), 9)} ${pad((r.ms / r.models).toFixed(3), 11)}  ${r.actions}`,
  );
}
const off = rows.filter((r) => r.preemption === 'off');
const on = rows.filter((r) => r.preemption === 'on');
// How time grows with size: log(t_full / t_eighth) / log 8; 1 is linear, 2 quadratic.
const growth = (list: typeof rows) => Math.log(list.at(-1)!.ms / list[0].ms) / Math.log(8);
console.log(
  `growth exponent from 1/8 to full size: ${growth(off).toFixed(2)} without preemption, ${growth(on).toFixed(2)} with (1 = linear)`,
);
const full = off.at(-1)!;
const fullOn = on.at(-1)!;
console.log(
  `RESULT policy-pass models=${full.models} replicas=${full.replicas} nodes=${full.nodes} scopes=${full.scopes} ` +
    `ms_per_pass=${full.ms.toFixed(1)} ms_per_decision=${(full.ms / full.models).toFixed(3)} growth=${growth(off).toFixed(2)} ` +
    `ms_per_pass_preempting=${fullOn.ms.toFixed(1)} preempts=${fullOn.preempts} growth_preempting=${growth(on).toFixed(2)}`,
);
