import { NODE_STATES } from '../domain/cluster.ts';
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
 * Each node's state, 1 for the one it is in and 0 for the others, so that an alert can ask `== 1`; and
 * how long ago an agent's node last heard from its agent, by `heartbeats` (ms since the epoch, by node
 * name, as the store has them): none for a simulated node, nor for an agent's never heard from. An age
 * is never below 0 (a heartbeat stamped by a database clock ahead of this one).
 */
export function nodeSeries(
  view: View,
  heartbeats: ReadonlyMap<string, number>,
): Pick<StateFigures, 'llmgw_node_state' | 'llmgw_node_heartbeat_age_seconds'> {
  const nodes = [...view.nodes.values()];
  return {
    llmgw_node_state: nodes.flatMap((node) =>
      NODE_STATES.map((state) => ({
        labels: { node: node.name, driver: node.driver ?? 'sim', state },
        value: node.state === state ? 1 : 0,
      })),
    ),
    llmgw_node_heartbeat_age_seconds: nodes.flatMap((node) => {
      const at = heartbeats.get(node.name);
      if (node.driver !== 'agent' || at === undefined) return [];
      return [{ labels: { node: node.name }, value: Math.max(0, (view.now - at) / 1000) }];
    }),
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
