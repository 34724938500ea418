import { type ClusterNode, type Replica, RUNNING_STATES, SERVING_STATES } from '../domain/cluster.ts';
import type { Decision } from '../domain/decision.ts';
import type { Model, Profile } from '../domain/model.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { scopeLabel } from '../domain/scope-names.ts';
import { nextClaim } from './claims.ts';
import { claimPhrase, limitSentence, pendingPhrase, replicas } from './explain.ts';
import { yieldsTo } from './fairness.ts';
import { isBorrowed } from './guarantee.ts';
import { blockingLimit } from './limits.ts';
import { canHost } from './placement.ts';
import {
  blockingRooms,
  guaranteeGivenAway,
  guaranteeOpened,
  mayPreempt,
  preemptible,
  roomWith,
  type Shortage,
  withoutSpares,
} from './preempt.ts';
import { isSpareVictim, mayReclaim } from './reclaim.ts';
import { add, complete, exceeding, fitsWithin, formatResources, sum } from './resources.ts';
import type { View } from './view.ts';

/**
 * Re-checks a place, reclaim or preempt decision on a fresh view taken under the reservation lock, so
 * that two models deciding at once never overrun a limit or a node, nor preempt a replica whose claim
 * is no longer lower. Returns why it may not happen, or null. A refusal is a normal outcome: the
 * reconciler plans again. A reclaim or preemption planned on an older view is refused when one of its
 * victims is no longer needed (room freed since): it would take a replica for nothing.
 */
export function reservationRefusal(view: View, decision: Decision): string | null {
  const model = view.models.get(decision.model);
  if (!model) return `model ${decision.model} is gone`;
  const profile = model.profiles.find((p) => p.name === decision.profile);
  if (!profile) return 'the profile of the decision is gone';
  const serving = view.replicasOfModel(model.name).filter((r) => SERVING_STATES.includes(r.state));
  if (serving.length >= model.max_replicas) return `max_replicas ${model.max_replicas} reached`;
  const node = decision.node ? view.nodes.get(decision.node) : undefined;
  if (!node) return 'the node of the decision is gone';
  if (!canHost(node, profile)) return `node ${node.name} can no longer host ${profile.name}`;
  if (decision.action === 'preempt') return preemptionRefusal(view, decision, model, profile, serving.length);
  const block = blockingLimit(view, model.owner, profile.resources);
  if (block) return limitSentence(view, block, profile.resources);

  if (decision.action === 'place') {
    if (!fitsWithin(profile.resources, view.free(node.name)))
      return `node ${node.name} no longer has room for ${profile.name}`;
    // Models that arrived since the plan was read may have a higher claim on the limit's room.
    const yielding = yieldsTo(view, model, profile, nextClaim(model, serving.length));
    return yielding && pendingPhrase(yielding);
  }
  const victims = activeVictims(view, decision, node.name);
  if (typeof victims === 'string') return victims;
  const cannot = victims
    .map(reclaimCheck(view, model, serving.length, decision.reclaim_for!))
    .find((why) => why);
  if (cannot) return cannot;
  const room = view.freeAfterDrains(node.name);
  if (!fitsWithin(profile.resources, add(room, sum(victims.map((v) => v.resources))))) {
    return `node ${node.name} no longer has room for ${profile.name}`;
  }
  const spare = victims.find((v) => isSpareVictim(profile.resources, room, victims, v));
  return spare ? `victim ${spare.id} is no longer needed on node ${node.name}` : null;
}

/** The decision's victims as they are now (on `node`, when given), or why one is no longer running. */
function activeVictims(view: View, decision: Decision, node?: string): Replica[] | string {
  const victims: Replica[] = [];
  for (const victim of decision.victims ?? []) {
    const replica = view.replicasOfModel(victim.model).find((r) => r.id === victim.replica);
    if (!replica || replica.state === 'draining' || (node && replica.node !== node)) {
      return `victim ${victim.replica} is no longer running`;
    }
    victims.push(replica);
  }
  return victims;
}

const guaranteeSentence = (victim: Replica) =>
  `victim ${victim.id} is protected by a guarantee the new replica would not keep`;

/** A reclaim takes only borrowed replicas, and under its own scope only those of a lower claim. */
function reclaimCheck(view: View, model: Model, serving: number, forScope: ScopeKey) {
  const claim = nextClaim(model, serving);
  const reclaimable = mayReclaim(view, model, claim, forScope);
  return (victim: Replica): string | null => {
    if (!isBorrowed(view, victim.id)) return `victim ${victim.id} is now protected by a guarantee`;
    return reclaimable(victim)
      ? null
      : `victim ${victim.id} may no longer be reclaimed for ${model.name} (${claimPhrase(claim)})`;
  };
}

/** A preemption takes only replicas of a strictly lower claim than the model's next replica has now. */
function preemptionCheck(view: View, model: Model, serving: number): (victim: Replica) => string | null {
  if (!mayPreempt(view, model.owner)) {
    return () => `a quota on the chain of ${model.name}'s owner no longer allows preemption`;
  }
  const claim = nextClaim(model, serving);
  const eligible = preemptible(view, model, claim);
  return (victim) =>
    eligible(victim)
      ? null
      : `victim ${victim.id} may no longer be preempted for ${model.name} (${claimPhrase(claim)})`;
}

/**
 * A preemption: every victim may still be preempted, none is protected by a guarantee the new replica
 * would not keep, none puts a scope off the model's chain back within its guarantee, and together they still bring every limit that blocks the replica within it and
 * leave it room on its node once they stop (one rule for a limit and for missing room), with none spare.
 */
function preemptionRefusal(
  view: View,
  decision: Decision,
  model: Model,
  profile: Profile,
  serving: number,
): string | null {
  const victims = activeVictims(view, decision);
  if (typeof victims === 'string') return victims;
  const cannot = victims.map(preemptionCheck(view, model, serving)).find((why) => why !== null);
  if (cannot) return cannot;
  const givenAway = guaranteeGivenAway(view, profile.resources, victims);
  if (givenAway) return guaranteeSentence(givenAway);
  const opened = guaranteeOpened(view, model, profile.resources, victims);
  if (opened) {
    return `victim ${opened.victim.id} would put ${scopeLabel(view.scopes, opened.scope)} back within its guarantee`;
  }
  const start: Shortage = {
    node: view.freeAfterDrains(decision.node!),
    limits: blockingRooms(view, model, profile.resources),
  };
  const room = roomWith(view, start, decision.node!, victims);
  if (!fitsWithin(profile.resources, room.node))
    return `node ${decision.node} no longer has room for ${profile.name}`;
  const short = [...room.limits].find(([, left]) => !fitsWithin(profile.resources, left));
  if (short) return `the limit of ${scopeLabel(view.scopes, short[0])} would still stop ${profile.name}`;
  const kept = withoutSpares(view, start, decision.node!, victims, profile.resources);
  const spare = victims.find((v) => !kept.includes(v));
  return spare ? `victim ${spare.id} is no longer needed` : null;
}

/**
 * Why a reserved replica may not start yet, or null. What runs on its node (starting, ready, draining)
 * and what was reserved there before it, with it, must fit the node: a replica reserved by a reclaim
 * waits until its victims have stopped, and two reservations never start into the same room. A
 * replica of a model for which replicas preempted for it still drain waits for them too: they may hold
 * the room of a limit rather than of this node. And a replica whose own victims (reclaimed or preempted
 * for it) still drain waits for them even when other room freed on the node: the scopes above both count
 * the room they share once (policy/holdings.ts countedOnce), which holds only while the two never run
 * at once.
 * `onNode` is the node's active replicas in reservation order (the order the reservation lock gave);
 * `others`, replicas of any node, among which those draining for the model or for the replica are
 * counted (the store reads only those; the simulator gives all it has).
 */
export function startRefusal(
  node: ClusterNode,
  onNode: readonly Replica[],
  replicaId: string,
  others: readonly Replica[] = [],
): string | null {
  const at = onNode.findIndex((r) => r.id === replicaId);
  if (at < 0) return `replica ${replicaId} holds no room on node ${node.name}`;
  const model = onNode[at].model;
  const preemptedDraining = others.filter((r) => r.state === 'draining' && r.preempted_for === model).length;
  if (preemptedDraining > 0) {
    return `${replicas(preemptedDraining)} preempted for ${onNode[at].model} still drain`;
  }
  const reclaimedDraining = others.filter((r) => r.state === 'draining' && r.reclaimed_for === replicaId);
  if (reclaimedDraining.length > 0) {
    return `${replicas(reclaimedDraining.length)} reclaimed for ${replicaId} still drain`;
  }
  const runsOrAhead = onNode.filter((r, i) => RUNNING_STATES.includes(r.state) || i <= at);
  const used = sum(runsOrAhead.map((r) => r.resources));
  const short = exceeding(used, complete(node.capacity));
  if (!short) return null;
  return `node ${node.name} has no room yet: what runs and what was reserved before ${replicaId} would hold ${formatResources({ [short]: used[short] })} of ${formatResources({ [short]: complete(node.capacity)[short] })}`;
}
