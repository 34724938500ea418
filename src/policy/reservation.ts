import { type ClusterNode, type Replica, RUNNING_STATES, SERVING_STATES } from '../domain/cluster.ts';
import type { Decision } from '../domain/decision.ts';
import { limitSentence } from './explain.ts';
import { isBorrowed } from './guarantee.ts';
import { blockingLimit } from './limits.ts';
import { canHost } from './placement.ts';
import { isSpareVictim } from './reclaim.ts';
import { add, complete, exceeding, fitsWithin, formatResources, sum } from './resources.ts';
import type { View } from './view.ts';

/**
 * Re-checks a place or reclaim decision on a fresh view taken under the reservation lock, so that two
 * models deciding at once never overrun a limit or a node. Returns why it may not happen, or null.
 * A refusal is a normal outcome: the reconciler plans again. A reclaim planned on an older view is
 * refused when one of its victims is no longer needed (room freed since): it would preempt for nothing.
 */
export function reservationRefusal(view: View, decision: Decision): string | null {
  const model = view.models.get(decision.model);
  if (!model) return `model ${decision.model} is gone`;
  const profile = model.profiles.find((p) => p.name === decision.profile);
  const node = decision.node ? view.nodes.get(decision.node) : undefined;
  if (!profile || !node) return 'the profile or node of the decision is gone';
  if (!canHost(node, profile)) return `node ${node.name} can no longer host ${profile.name}`;
  const serving = view.replicasOfModel(model.name).filter((r) => SERVING_STATES.includes(r.state));
  if (serving.length >= model.max_replicas) return `max_replicas ${model.max_replicas} reached`;

  const block = blockingLimit(view, model.owner, profile.resources);
  if (block) return limitSentence(view, block, profile.resources);

  if (decision.action !== 'reclaim') {
    return fitsWithin(profile.resources, view.free(node.name))
      ? null
      : `node ${node.name} no longer has room for ${profile.name}`;
  }
  const active = new Map(view.replicasOnNode(node.name).map((r) => [r.id, r]));
  const victims: Replica[] = [];
  for (const victim of decision.victims ?? []) {
    const replica = active.get(victim.replica);
    if (!replica || replica.state === 'draining') return `victim ${victim.replica} is no longer running`;
    if (!isBorrowed(view, victim.replica)) return `victim ${victim.replica} is now protected by a guarantee`;
    victims.push(replica);
  }
  const room = view.freeAfterDrains(node.name);
  if (!fitsWithin(profile.resources, add(room, sum(victims.map((v) => v.resources))))) {
    return `node ${node.name} no longer has room for ${profile.name}`;
  }
  const spare = victims.find((v) => isSpareVictim(profile.resources, room, victims, v));
  return spare ? `victim ${spare.id} is no longer needed on node ${node.name}` : null;
}

/**
 * Why a reserved replica may not start yet, or null. What runs on its node (starting, ready, draining)
 * and what was reserved there before it, with it, must fit the node: a replica reserved by a reclaim
 * waits until its victims have stopped, and two reservations never start into the same room.
 * `onNode` is the node's active replicas in reservation order (the order the reservation lock gave).
 */
export function startRefusal(
  node: ClusterNode,
  onNode: readonly Replica[],
  replicaId: string,
): string | null {
  const at = onNode.findIndex((r) => r.id === replicaId);
  if (at < 0) return `replica ${replicaId} holds no room on node ${node.name}`;
  const runsOrAhead = onNode.filter((r, i) => RUNNING_STATES.includes(r.state) || i <= at);
  const used = sum(runsOrAhead.map((r) => r.resources));
  const short = exceeding(used, complete(node.capacity));
  if (!short) return null;
  return `node ${node.name} has no room yet: what runs and what was reserved before ${replicaId} would hold ${formatResources({ [short]: used[short] })} of ${formatResources({ [short]: complete(node.capacity)[short] })}`;
}
