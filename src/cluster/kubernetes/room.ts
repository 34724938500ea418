import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { NodeInStep } from '../../domain/kubernetes-work.ts';
import type { Resources } from '../../domain/resources.ts';
import { GPU_RESOURCE, MANAGED_BY } from './pod.ts';

/**
 * Each node as llmgw should see it, from the nodes and pods of the cluster: its allocatable GPUs,
 * cores and memory, less the requests of the pods bound there that llmgw does not run and that have not
 * ended (so llmgw never plans onto capacity someone else holds); its GPU model from `gpuLabel`.
 */
export function nodesInStep(
  nodes: readonly V1Node[],
  pods: readonly V1Pod[],
  gpuLabel: string,
  now: Date,
): NodeInStep[] {
  const foreign = new Map<string, Resources>();
  for (const pod of pods) {
    const node = pod.spec?.nodeName;
    if (!node || isOurs(pod) || hasEnded(pod)) continue;
    foreign.set(node, add(foreign.get(node) ?? {}, podRequests(pod)));
  }
  return nodes.map((node) => {
    const name = node.metadata?.name ?? '';
    const allocatable = resourcesOf(node.status?.allocatable ?? {});
    const held = foreign.get(name) ?? {};
    const capacity: Resources = {};
    for (const [dimension, value] of Object.entries(allocatable) as [keyof Resources, number][]) {
      capacity[dimension] = round(Math.max(0, value - (held[dimension] ?? 0)));
    }
    const all = node.metadata?.labels ?? {};
    // llmgw's node labels are keys of at most 63 characters (the API's schema); longer ones are not kept.
    const labels = Object.fromEntries(Object.entries(all).filter(([key]) => key.length <= 63));
    const ready = node.status?.conditions?.find((condition) => condition.type === 'Ready');
    const readyAt =
      ready?.status === 'True' ? now : ready?.lastTransitionTime ? new Date(ready.lastTransitionTime) : null;
    return {
      name,
      capacity,
      gpu_model: all[gpuLabel] ?? null,
      labels,
      cordoned: node.spec?.unschedulable === true,
      ready: ready?.status === 'True',
      readyAt,
    };
  });
}

export const isOurs = (pod: V1Pod): boolean =>
  pod.metadata?.labels?.['app.kubernetes.io/managed-by'] === MANAGED_BY['app.kubernetes.io/managed-by'];

/** A pod that ended holds nothing (kube-scheduler counts it out too). */
const hasEnded = (pod: V1Pod): boolean => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/**
 * What a pod requests, as kube-scheduler counts it: the sum of its containers', or an init container's
 * when larger (they run one at a time before the others), plus its overhead.
 */
export function podRequests(pod: V1Pod): Resources {
  const containers = (pod.spec?.containers ?? []).reduce<Resources>(
    (sum, container) => add(sum, resourcesOf(container.resources?.requests ?? {})),
    {},
  );
  const init = (pod.spec?.initContainers ?? []).reduce<Resources>(
    (most, container) => larger(most, resourcesOf(container.resources?.requests ?? {})),
    {},
  );
  return add(larger(containers, init), resourcesOf(pod.spec?.overhead ?? {}));
}

/** GPUs, cores and memory (GiB) from Kubernetes quantities; other resources are not llmgw's. */
export function resourcesOf(quantities: Record<string, string>): Resources {
  const out: Resources = {};
  if (quantities[GPU_RESOURCE] !== undefined) out.gpus = parseQuantity(quantities[GPU_RESOURCE]);
  if (quantities.cpu !== undefined) out.cores = parseQuantity(quantities.cpu);
  if (quantities.memory !== undefined) out.memory_gib = round(parseQuantity(quantities.memory) / 2 ** 30);
  return out;
}

const SUFFIXES: Record<string, number> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const FRACTIONS: Record<string, number> = { n: 1e9, u: 1e6, m: 1e3 };

/** A Kubernetes quantity ("500m", "64Gi", "1e3", "8") as a number; throws on what is none. */
export function parseQuantity(text: string): number {
  const match = /^([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?$/.exec(
    text.trim(),
  );
  if (!match) throw new Error(`"${text}" is no Kubernetes quantity`);
  // Divided, not multiplied by 0.001: 6129m is 6.129, not 6.129000000000001.
  const divisor = FRACTIONS[match[2] ?? ''];
  return divisor ? Number(match[1]) / divisor : Number(match[1]) * SUFFIXES[match[2] ?? ''];
}

function add(a: Resources, b: Resources): Resources {
  const out: Resources = { ...a };
  for (const [dimension, value] of Object.entries(b) as [keyof Resources, number][]) {
    out[dimension] = (out[dimension] ?? 0) + value;
  }
  return out;
}

function larger(a: Resources, b: Resources): Resources {
  const out: Resources = { ...a };
  for (const [dimension, value] of Object.entries(b) as [keyof Resources, number][]) {
    out[dimension] = Math.max(out[dimension] ?? 0, value);
  }
  return out;
}

/** Thousandths: a millicore, a MiB; no float dust in the store. */
const round = (value: number) => Math.round(value * 1000) / 1000;
