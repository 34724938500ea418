import type { ClusterNode } from '../domain/cluster.ts';
import type { Profile } from '../domain/model.ts';
import type { Resources } from '../domain/resources.ts';
import { compareScarceFirst, fitsWithin } from './resources.ts';
import { perView, type View } from './view.ts';

/** A node may run a replica of the profile at all: it is ready and has the GPU model asked for. */
export const canHost = (node: ClusterNode, profile: Profile): boolean =>
  node.state === 'ready' && (!profile.gpu_model || node.gpu_model === profile.gpu_model);

/** The nodes that can host each GPU model asked for ('' for any), in the view's order. */
const hostsByGpuModel = perView(() => new Map<string, ClusterNode[]>());

/** The nodes that can host the profile (canHost), found once per view for each GPU model asked for. */
export function hostsOf(view: View, profile: Profile): readonly ClusterNode[] {
  const known = hostsByGpuModel(view);
  const key = profile.gpu_model || '';
  let hosts = known.get(key);
  if (!hosts) {
    hosts = [...view.nodes.values()].filter((node) => canHost(node, profile));
    known.set(key, hosts);
  }
  return hosts;
}

const usesGpus = (r: Resources) => (r.gpus ?? 0) > 0;
const onGpuNode = (fit: Fit) => (usesGpus(fit.node.capacity) ? 1 : 0);

interface Fit {
  node: ClusterNode;
  /** Free room on the node before placing the replica. */
  room: Resources;
}

/**
 * Best fit for a replica of resources `r` among the nodes it fits on:
 * 1. CPU-only replicas: nodes without GPUs first (GPU nodes keep their cores for GPU replicas);
 * 2. fewest free GPUs left after placing it;
 * 3. then fewest free cores left;
 * 4. then least free memory left;
 * 5. node name.
 * What is left is the free room minus r, the same r for every node, so 2-4 compare the free room.
 */
export const bestFitFor =
  (r: Resources) =>
  (a: Fit, b: Fit): number => {
    if (!usesGpus(r)) {
      const byKind = onGpuNode(a) - onGpuNode(b);
      if (byKind !== 0) return byKind;
    }
    return (
      compareScarceFirst(a.room, b.room) ||
      (a.node.name < b.node.name ? -1 : a.node.name > b.node.name ? 1 : 0)
    );
  };

/** Best fits already found on a view, by what they depend on: a view never changes, and many profiles alike. */
const bestFits = perView(() => new Map<string, string | null>());

/** The node a new replica of the profile goes to, or null when no node has room (no headroom). */
export function pickNode(view: View, profile: Profile): string | null {
  const r = profile.resources;
  const key = `${profile.gpu_model ?? ''}|${r.gpus ?? 0}|${r.cores ?? 0}|${r.memory_gib ?? 0}`;
  const found = bestFits(view);
  if (!found.has(key)) found.set(key, bestFit(view, profile));
  return found.get(key)!;
}

function bestFit(view: View, profile: Profile): string | null {
  const compare = bestFitFor(profile.resources);
  let best: Fit | null = null;
  for (const node of hostsOf(view, profile)) {
    const room = view.free(node.name);
    if (!fitsWithin(profile.resources, room)) continue;
    const fit = { node, room };
    if (!best || compare(fit, best) < 0) best = fit;
  }
  return best?.node.name ?? null;
}
