import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import type { ClusterNode, Replica } from '../domain/cluster.ts';
import type { Profile } from '../domain/model.ts';
import type { Resources } from '../domain/resources.ts';
import { DEFAULT_POLICY_SETTINGS } from '../domain/snapshot.ts';
import { canHost, pickNode } from '../policy/placement.ts';
import { complete, fitsWithin, subtract } from '../policy/resources.ts';
import { buildView } from '../policy/view.ts';

/** A pod of the Alibaba GPU trace as a replica request. */
export interface PodRequest {
  name: string;
  /** What it holds: a fractional GPU (gpu_milli < 1000) rounded up to a whole one. */
  resources: Resources;
  /** The GPUs it asked for, fractions kept: what "arrived workload" counts. */
  gpuDemand: number;
}

/** The rows of a CSV file with a header, by column name (quoted fields and CRLF lines read as CSV says). */
const rows = (text: string): Record<string, string>[] =>
  parse(text, { columns: true, skip_empty_lines: true });

/** openb_node_list_gpu_node.csv: `sn,cpu_milli,memory_mib,gpu,model`. */
export const parseNodes = (text: string): ClusterNode[] =>
  rows(text).map((r) => ({
    name: r.sn,
    capacity: {
      gpus: Number(r.gpu),
      cores: Number(r.cpu_milli) / 1000,
      memory_gib: Number(r.memory_mib) / 1024,
    },
    gpu_model: r.model || null,
    labels: {},
    state: 'ready',
  }));

/** openb_pod_list_default.csv in creation order. */
export const parsePods = (text: string): PodRequest[] =>
  rows(text)
    .map((r) => ({ r, created: Number(r.creation_time) }))
    .sort((a, b) => a.created - b.created)
    .map(({ r }) => {
      const gpus = Number(r.num_gpu);
      const share = gpus === 1 ? Number(r.gpu_milli) / 1000 : gpus;
      return {
        name: r.name,
        resources: { gpus, cores: Number(r.cpu_milli) / 1000, memory_gib: Number(r.memory_mib) / 1024 },
        gpuDemand: share,
      };
    });

export const readNodes = (path: string) => parseNodes(readFileSync(path, 'utf8'));
export const readPods = (path: string) => parsePods(readFileSync(path, 'utf8'));

/** The cluster as a placer sees it: nodes in file order, each one's free room, what was placed. */
export interface PlacementState {
  nodes: readonly ClusterNode[];
  free: Map<string, Required<Resources>>;
  replicas: Replica[];
}

/** Picks the node for a pod, or null when none fits. */
export type Placer = (state: PlacementState, pod: PodRequest) => string | null;

const podProfile = (pod: PodRequest): Profile => ({ name: 'pod', priority: 0, resources: pod.resources });

/** llmgw's placement (policy/placement.ts pickNode: best fit on the scarce dimension), on a view of the state. */
export const llmgwBestFit: Placer = (state, pod) =>
  pickNode(
    buildView({
      now: 0,
      scopes: [],
      quotas: [],
      models: [],
      measurements: [],
      nodes: [...state.nodes],
      replicas: state.replicas,
      load: {},
      settings: DEFAULT_POLICY_SETTINGS,
    }),
    podProfile(pod),
  );

const fitting = (state: PlacementState, pod: PodRequest) =>
  state.nodes.filter(
    (node) => canHost(node, podProfile(pod)) && fitsWithin(pod.resources, state.free.get(node.name)!),
  );

/** First fit: the first node in the list with room. */
export const firstFit: Placer = (state, pod) => fitting(state, pod)[0]?.name ?? null;

/**
 * Dot product (Tetris, Grandl et al., SIGCOMM'14, one of FGD's baselines): the node whose free room,
 * as shares of its capacity, aligns best with the request, as shares of the same capacity.
 */
export const dotProduct: Placer = (state, pod) => {
  let best: { name: string; score: number } | null = null;
  for (const node of fitting(state, pod)) {
    const cap = complete(node.capacity);
    const free = state.free.get(node.name)!;
    const r = complete(pod.resources);
    let score = 0;
    for (const d of ['gpus', 'cores', 'memory_gib'] as const) {
      if (cap[d] > 0) score += (r[d] / cap[d]) * (free[d] / cap[d]);
    }
    if (!best || score > best.score) best = { name: node.name, score };
  }
  return best?.name ?? null;
};

/** One point of the curve: after the pods arrived so far. */
export interface PlacementPoint {
  /** GPUs the arrived pods asked for, as a share of the cluster's GPUs. */
  arrived: number;
  /** GPUs no pod holds, as a share of the cluster's GPUs. */
  unallocated: number;
  /**
   * GPUs serving no request, as a share: the unallocated ones and what rounding up holds beyond the
   * requests. With GPU sharing this is the published "unallocated", so the two compare.
   */
  idle: number;
}

export interface PlacementRun {
  placer: string;
  points: PlacementPoint[];
  placed: number;
  refused: number;
  /** GPUs the refused pods asked for. */
  refusedGpus: number;
  /** GPUs placed pods hold beyond what they asked for: fractions rounded up. */
  roundedUpGpus: number;
}

/** Places the pods in order, never removing one; a point every `every` pods and after the last. */
export function replayPlacement(
  name: string,
  placer: Placer,
  nodes: readonly ClusterNode[],
  pods: readonly PodRequest[],
  every = 100,
): PlacementRun {
  const state: PlacementState = {
    nodes,
    free: new Map(nodes.map((n) => [n.name, complete(n.capacity)])),
    replicas: [],
  };
  const totalGpus = nodes.reduce((total, n) => total + (n.capacity.gpus ?? 0), 0);
  let allocated = 0;
  let served = 0;
  let arrived = 0;
  const run: PlacementRun = {
    placer: name,
    points: [],
    placed: 0,
    refused: 0,
    refusedGpus: 0,
    roundedUpGpus: 0,
  };
  pods.forEach((pod, i) => {
    arrived += pod.gpuDemand;
    const node = placer(state, pod);
    if (node) {
      state.free.set(node, complete(subtract(state.free.get(node)!, pod.resources)));
      state.replicas.push({
        id: pod.name,
        model: 'pods',
        profile: 'pod',
        node,
        resources: pod.resources,
        state: 'ready',
        created_at: i,
      });
      allocated += pod.resources.gpus ?? 0;
      served += pod.gpuDemand;
      run.roundedUpGpus += (pod.resources.gpus ?? 0) - pod.gpuDemand;
      run.placed++;
    } else {
      run.refused++;
      run.refusedGpus += pod.gpuDemand;
    }
    if (i % every === every - 1 || i === pods.length - 1) {
      run.points.push({
        arrived: arrived / totalGpus,
        unallocated: 1 - allocated / totalGpus,
        idle: 1 - served / totalGpus,
      });
    }
  });
  return run;
}
