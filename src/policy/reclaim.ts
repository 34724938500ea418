import type { Replica } from '../domain/cluster.ts';
import type { Claim, Victim } from '../domain/decision.ts';
import type { Model, Profile } from '../domain/model.ts';
import { DIMENSIONS, type Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { claims, compareClaims } from './claims.ts';
import { borrowedByScope, isBorrowed } from './guarantee.ts';
import { holdsOf } from './holdings.ts';
import { canHost } from './placement.ts';
import { add, compareScarceFirst, fitsWithin, sum, usesAnyOf } from './resources.ts';
import { isUnder, olderFirst, perView, type View } from './view.ts';

/**
 * The nearest scope S on the owner's chain within whose guarantee a new replica of resources `r`
 * fits (`holds(S) + r <= G(S)` on the dimensions G(S) sets, r using one of them), or null: the owner
 * is not within its guarantee and may not reclaim. Guarantees nest: S counts only if the replica also
 * fits every ancestor of S whose guarantee it draws on (walked from the org down, as protection does).
 */
export function reclaimingScope(view: View, owner: ScopeKey | null, r: Resources): ScopeKey | null {
  const chain = view.chain(owner);
  let within: ScopeKey | null = null;
  for (let i = chain.length - 1; i >= 0; i--) {
    const guarantee = view.quotas.get(chain[i])?.guarantee;
    if (!guarantee || !usesAnyOf(r, guarantee)) continue;
    if (!fitsWithin(add(holdsOf(view, chain[i]), r), guarantee)) break;
    within = chain[i];
  }
  return within;
}

export interface ReclaimPlan {
  node: string;
  victims: Victim[];
  /** The scope within whose guarantee the new replica fits. */
  for: ScopeKey;
}

/** What replicas of models without owner borrow in all: they compete as one borrower. */
const ownerlessBorrowed = perView((view) =>
  sum(view.active.filter((r) => view.ownerOf(r) === null && isBorrowed(view, r.id)).map((r) => r.resources)),
);

const borrowedBy = (view: View, owner: ScopeKey | null): Resources =>
  owner === null ? ownerlessBorrowed(view) : (borrowedByScope(view).get(owner) ?? {});

/**
 * Victims on a node, taken first to last:
 * 1. of the owner that borrows most (its borrowed resources, GPUs first, then cores, then memory);
 * 2. newest first;
 * 3. replica ID (through the age order).
 */
const victimOrder = (view: View) => (a: Replica, b: Replica) =>
  compareScarceFirst(borrowedBy(view, view.ownerOf(b)), borrowedBy(view, view.ownerOf(a))) ||
  olderFirst(b, a);

/** r frees some dimension on which `room` is still short of `need`. */
export const relieves = (r: Resources, room: Resources, need: Resources): boolean =>
  DIMENSIONS.some((d) => (r[d] ?? 0) > 0 && (need[d] ?? 0) > (room[d] ?? 0));

/**
 * A victim is spare when the other victims, with the room the node has once its draining replicas
 * stopped, already free enough for `need`: a reclaim never takes one.
 */
export function isSpareVictim<T extends { resources: Resources }>(
  need: Resources,
  room: Resources,
  victims: readonly T[],
  victim: T,
): boolean {
  const rest = sum(victims.filter((v) => v !== victim).map((v) => v.resources));
  return fitsWithin(need, add(room, rest));
}

/** Drops spare victims, last taken first, so that no proper subset of those left frees enough room. */
function withoutSpares(need: Resources, room: Resources, victims: readonly Replica[]): Replica[] {
  let kept = [...victims];
  for (const victim of [...victims].reverse()) {
    if (isSpareVictim(need, room, kept, victim)) kept = kept.filter((v) => v !== victim);
  }
  return kept;
}

/**
 * Whether a reclaim for `forScope` may take the replica: a borrowed replica of another model that has
 * started and does not drain. A pending one may stand on room its own victims still hold (where a
 * guarantee that did not take them may count it borrowed until they stop): taking it would undo that
 * preemption or reclaim, in turns (as for preemption). One under `forScope` itself must also have a claim strictly lower than `claim`:
 * within the scope whose guarantee it is, claims decide (a higher claim could preempt the reclaimed
 * room back, and the two would take turns); across scopes the guarantee does.
 */
export function mayReclaim(
  view: View,
  model: Model,
  claim: Claim,
  forScope: ScopeKey,
): (replica: Replica) => boolean {
  return (r) => {
    if (r.state !== 'starting' && r.state !== 'ready') return false;
    if (r.model === model.name || !isBorrowed(view, r.id)) return false;
    if (!isUnder(view, forScope, r)) return true;
    // Claims are figured (for every model, once per view) only when a victim under the scope asks.
    const its = claims(view).get(r.id);
    return its !== undefined && compareClaims(its, claim) < 0;
  };
}

/**
 * Reclaim plans, best first:
 * 1. fewest victims;
 * 2. least victim resources (GPUs first, then cores, then memory);
 * 3. node name.
 */
function comparePlans(a: { node: string; victims: Replica[]; freed: Resources }, b: typeof a): number {
  return (
    a.victims.length - b.victims.length ||
    compareScarceFirst(a.freed, b.freed) ||
    (a.node < b.node ? -1 : a.node > b.node ? 1 : 0)
  );
}

/**
 * Where and whom to reclaim for a new replica of the profile when no node has room, or null when the
 * owner is not within its guarantee or no node can be freed by borrowed replicas alone.
 *
 * Room is counted as it will be once the node's draining replicas have stopped: their room frees
 * anyway, so draining more for it would preempt for nothing (reservations already made there count,
 * and the new replica starts only when what runs leaves it room). Victims are borrowed replicas of
 * other models that are not already draining. On each ready node with the right GPU model the victims
 * are taken greedily in victim order, each only if it frees a dimension still short, until the replica
 * fits; then victims that the others make spare are dropped. The plan with the fewest victims (then
 * the least victim resources) wins; a node whose draining replicas free enough needs none. Greedy per
 * node keeps a pass linear in the replicas; it may miss a smaller set that skips the preferred
 * victims, which the order accepts.
 */
export function planReclaim(view: View, model: Model, profile: Profile, claim: Claim): ReclaimPlan | null {
  const forScope = reclaimingScope(view, model.owner, profile.resources);
  if (!forScope) return null;
  const need = profile.resources;
  const order = victimOrder(view);
  const reclaimable = mayReclaim(view, model, claim, forScope);
  let best: { node: string; victims: Replica[]; freed: Resources } | null = null;
  for (const node of view.nodes.values()) {
    if (!canHost(node, profile)) continue;
    const candidates = view.replicasOnNode(node.name).filter(reclaimable).sort(order);
    const afterDrains = view.freeAfterDrains(node.name);
    let room = afterDrains;
    const taken: Replica[] = [];
    for (const candidate of candidates) {
      if (fitsWithin(need, room)) break;
      if (!relieves(candidate.resources, room, need)) continue;
      taken.push(candidate);
      room = add(room, candidate.resources);
    }
    if (!fitsWithin(need, room)) continue;
    const victims = withoutSpares(need, afterDrains, taken);
    const plan = { node: node.name, victims, freed: sum(victims.map((v) => v.resources)) };
    if (!best || comparePlans(plan, best) < 0) best = plan;
  }
  if (!best) return null;
  return {
    node: best.node,
    for: forScope,
    victims: best.victims.map((r) => ({
      replica: r.id,
      model: r.model,
      owner: view.ownerOf(r),
      node: r.node,
      resources: r.resources,
    })),
  };
}
