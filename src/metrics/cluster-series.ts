import { DIMENSIONS, type Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { nodeUsage } from '../policy/node-usage.ts';
import { sum } from '../policy/resources.ts';
import type { View } from '../policy/view.ts';
import type { StateFigures } from './state-gauge-definitions.ts';

/** What the ready nodes have, what the guarantees promise of it, and whether a node runs more than it has. */
export function clusterSeries(
  view: View,
): Pick<StateFigures, 'llmgw_cluster_capacity' | 'llmgw_cluster_guaranteed' | 'llmgw_node_overcommitted'> {
  const ready = [...view.nodes.values()].filter((node) => node.state === 'ready');
  const capacity = sum(ready.map((node) => node.capacity));
  const promised = guaranteed(view);
  return {
    llmgw_cluster_capacity: DIMENSIONS.map((d) => ({ labels: { resource: d }, value: capacity[d] ?? 0 })),
    llmgw_cluster_guaranteed: DIMENSIONS.map((d) => ({ labels: { resource: d }, value: promised[d] ?? 0 })),
    llmgw_node_overcommitted: [...view.nodes.values()].map((node) => ({
      labels: { node: node.name },
      value: nodeUsage(node, view.replicasOnNode(node.name)).overcommitted ? 1 : 0,
    })),
  };
}

/**
 * The guarantees of all orgs, each scope promising the larger of its own guarantee and what the
 * scopes beneath it promise, per dimension: a team's guarantee inside its org's is not counted twice,
 * and one the org does not cover adds to it.
 */
function guaranteed(view: View): Resources {
  const children = new Map<ScopeKey, ScopeKey[]>();
  for (const scope of view.scopes.values()) {
    if (scope.parent) children.set(scope.parent, [...(children.get(scope.parent) ?? []), scope.key]);
  }
  const promised = (key: ScopeKey): Resources => {
    const own = view.quotas.get(key)?.guarantee ?? {};
    const below = sum((children.get(key) ?? []).map(promised));
    const out: Resources = {};
    for (const d of DIMENSIONS) out[d] = Math.max(own[d] ?? 0, below[d] ?? 0);
    return out;
  };
  const orgs = [...view.scopes.values()].filter((scope) => scope.parent === null);
  return sum(orgs.map((org) => promised(org.key)));
}
