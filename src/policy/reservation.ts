import { SERVING_STATES } from '../domain/cluster.ts';
import type { Decision } from '../domain/decision.ts';
import { limitSentence } from './explain.ts';
import { isBorrowed } from './guarantee.ts';
import { blockingLimit } from './limits.ts';
import { canHost } from './placement.ts';
import { add, complete, fitsWithin, sum } from './resources.ts';
import type { View } from './view.ts';

/**
 * Re-checks a place or reclaim decision on a fresh view taken under the reservation lock, so that two
 * models deciding at once never overrun a limit or a node. Returns why it may not happen, or null.
 * A refusal is a normal outcome: the reconciler plans again.
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

  const victims = decision.victims ?? [];
  const active = new Map(view.replicasOnNode(node.name).map((r) => [r.id, r]));
  for (const victim of victims) {
    const replica = active.get(victim.replica);
    if (!replica || replica.state === 'draining') return `victim ${victim.replica} is no longer running`;
    if (!isBorrowed(view, victim.replica)) return `victim ${victim.replica} is now protected by a guarantee`;
  }
  const room = add(view.free(node.name), sum(victims.map((v) => active.get(v.replica)!.resources)));
  if (!fitsWithin(profile.resources, room)) return `node ${node.name} no longer has room for ${profile.name}`;
  return null;
}

/**
 * Reserved replicas of a model that may start now: their node's starting, ready and draining replicas
 * leave room for them. A replica reserved by a reclaim waits here until its victims have stopped.
 */
export function startable(view: View, modelName: string): string[] {
  const ready: string[] = [];
  for (const replica of view.replicasOfModel(modelName)) {
    if (replica.state !== 'pending') continue;
    const node = view.nodes.get(replica.node);
    if (!node) continue;
    const running = view.replicasOnNode(node.name).filter((r) => r.state !== 'pending');
    // Other reservations started before this one count as running once they start; pending ones do not.
    const used = sum(running.map((r) => r.resources));
    if (fitsWithin(add(used, replica.resources), complete(node.capacity))) ready.push(replica.id);
  }
  return ready;
}
