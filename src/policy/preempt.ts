import type { Replica } from '../domain/cluster.ts';
import type { Claim, Victim } from '../domain/decision.ts';
import type { Model, Profile } from '../domain/model.ts';
import type { Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { claims, compareClaims } from './claims.ts';
import { protection } from './guarantee.ts';
import { holdsOf } from './holdings.ts';
import { canHost } from './placement.ts';
import { relieves } from './reclaim.ts';
import {
  add,
  compareScarceFirst,
  fitsWithin,
  onDimensionsOf,
  subtract,
  sum,
  usesAnyOf,
} from './resources.ts';
import { isUnder, olderFirst, perView, type View } from './view.ts';

/** The models of this owner may preempt: no quota on its chain says "never". */
export const mayPreempt = (view: View, owner: ScopeKey | null): boolean =>
  view.chain(owner).every((key) => view.quotas.get(key)?.preemption !== 'never');

/**
 * Whether a replica may be preempted for a new replica of `model` whose claim is `claim`: not one of
 * the model's own, started (a pending one may stand on room its own victims still hold, where the
 * guarantee walk counts it borrowed until they stop: taking it would undo that preemption in turns),
 * of a strictly lower claim, and not protected by the guarantee of a scope off the model's owner chain
 * (guarantees still protect across scopes).
 */
export function preemptible(view: View, model: Model, claim: Claim): (replica: Replica) => boolean {
  const chain = view.chain(model.owner);
  const claimed = claims(view);
  const protectors = protection(view);
  return (replica) => {
    if (replica.model === model.name || replica.state === 'draining' || replica.state === 'pending') {
      return false;
    }
    const its = claimed.get(replica.id);
    if (!its || compareClaims(its, claim) >= 0) return false;
    const protector = protectors.get(replica.id) ?? null;
    return protector === null || chain.includes(protector);
  };
}

/** Draining replicas by the model they were preempted for. */
const drainingPreempted = perView((view) => {
  const byModel = new Map<string, Replica[]>();
  for (const r of view.active) {
    if (r.state !== 'draining' || !r.preempted_for) continue;
    const list = byModel.get(r.preempted_for);
    if (list) list.push(r);
    else byModel.set(r.preempted_for, [r]);
  }
  return byModel;
});

/** Replicas preempted for the model that still drain: its reserved replica starts once they stopped. */
export const preemptedFor = (view: View, model: Model): readonly Replica[] =>
  drainingPreempted(view).get(model.name) ?? [];

/** Those of them under `scope`. */
export const drainingFor = (view: View, model: Model, scope: ScopeKey): Replica[] =>
  preemptedFor(view, model).filter((r) => isUnder(view, scope, r));

/**
 * The room the limit of `scope` leaves the model once what drains for it has stopped, on the dimensions
 * the limit sets: L(S) - holds(S) + what drains under S for the model. Room draining for another model
 * is that model's, so it does not count.
 */
export function limitRoom(view: View, model: Model, scope: ScopeKey): Resources {
  const limit = view.quotas.get(scope)?.limit ?? {};
  const coming = sum(drainingFor(view, model, scope).map((r) => r.resources));
  return onDimensionsOf(add(subtract(limit, holdsOf(view, scope)), coming), limit);
}

/**
 * Started replicas with a claim, in victim order:
 * 1. the lowest claim first;
 * 2. the newest first.
 */
const victimOrder = perView((view) => {
  const claimed = claims(view);
  const ordered = view.active
    .filter((r) => (r.state === 'starting' || r.state === 'ready') && claimed.has(r.id))
    .sort((a, b) => compareClaims(claimed.get(a.id)!, claimed.get(b.id)!) || olderFirst(b, a));
  return { ordered, position: new Map(ordered.map((r, i) => [r.id, i])) };
});

/** The index of the first replica in victim order whose claim is not below `claim` (binary search). */
function firstAtOrAbove(
  ordered: readonly Replica[],
  claimed: ReadonlyMap<string, Claim>,
  claim: Claim,
): number {
  let low = 0;
  let high = ordered.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (compareClaims(claimed.get(ordered[middle].id)!, claim) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

export interface PreemptionPlan {
  /** Where the new replica is reserved at once; it starts once its victims have stopped. */
  node: string;
  /** The scope whose limit blocks the new replica, or null. */
  limit: ScopeKey | null;
  claim: Claim;
  victims: Victim[];
}

interface Candidate {
  node: string;
  victims: Replica[];
  freed: Resources;
  /** The strongest claim among the victims. */
  strongest: Claim;
}

/**
 * Preemption plans, best first:
 * 1. fewest victims;
 * 2. least victim resources (GPUs first, then cores, then memory);
 * 3. the lowest claim among them (compared by the strongest victim);
 * 4. node name.
 */
function comparePlans(a: Candidate, b: Candidate): number {
  return (
    a.victims.length - b.victims.length ||
    compareScarceFirst(a.freed, b.freed) ||
    compareClaims(a.strongest, b.strongest) ||
    (a.node < b.node ? -1 : a.node > b.node ? 1 : 0)
  );
}

/** Room still short, as the greedy choice of victims tracks it. */
export interface Shortage {
  /** Free room on the node once its draining replicas have stopped, plus victims taken there. */
  node: Resources;
  /** Each limited scope of the model's chain whose room the replica does not fit (limitRoom), plus victims taken under it. */
  limits: Map<ScopeKey, Resources>;
}

/** The scopes of the model's chain whose limit a new replica of `need` would pass, nearest first, with their room. */
export function blockingRooms(view: View, model: Model, need: Resources): Map<ScopeKey, Resources> {
  const rooms = new Map<ScopeKey, Resources>();
  for (const scope of view.chain(model.owner)) {
    if (!view.quotas.get(scope)?.limit) continue;
    const room = limitRoom(view, model, scope);
    if (!fitsWithin(need, room)) rooms.set(scope, room);
  }
  return rooms;
}

/**
 * Which replicas to preempt for a new replica of the profile with claim `claim` (POLICY.md "Priority
 * and fair sharing among models"), or null when none can free enough.
 *
 * Victims are taken in victim order (the lowest claim, then the newest), each only if it frees a
 * dimension still short, then victims the others make spare are dropped. When limits of the chain
 * block the replica, victims under them must bring `holds + R` within each once they have stopped;
 * the replica must also fit its node once its victims there (and its draining replicas) have stopped.
 * The new replica is reserved on the node at once, as a reclaim does, so that nobody else takes the
 * room its victims free, and it starts once they have stopped.
 */
export function planPreemption(
  view: View,
  model: Model,
  profile: Profile,
  claim: Claim,
): PreemptionPlan | null {
  const need = profile.resources;
  const limits = blockingRooms(view, model, need);
  const outermost = [...limits.keys()].at(-1);
  const claimed = claims(view);
  const { ordered } = victimOrder(view);
  // Victims of a lower claim come first in victim order: only that prefix is looked at.
  const lower = ordered
    .slice(0, firstAtOrAbove(ordered, claimed, claim))
    .filter(preemptible(view, model, claim));
  if (lower.length === 0) return null;
  const underLimit = outermost ? lower.filter((r) => isUnder(view, outermost, r)) : [];

  const protectors = protection(view);
  const greedy = (start: Shortage, node: string, candidates: readonly Replica[]): Replica[] | null => {
    const taken: Replica[] = [];
    let room = start;
    for (const candidate of candidates) {
      if (leavesRoomFor(need, room)) break;
      if (!relievesShortage(view, candidate, room, node, need)) continue;
      taken.push(candidate);
      room = roomWith(view, start, node, taken);
    }
    if (taken.length === 0 || !leavesRoomFor(need, room)) return null;
    return withoutSpares(view, start, node, taken, need);
  };
  // Protected victims only when the new replica keeps their guarantee's room guaranteed; else without.
  const choose = (start: Shortage, node: string, candidates: readonly Replica[]) => {
    const victims = greedy(start, node, candidates);
    if (!victims || !guaranteeGivenAway(view, need, victims)) return victims;
    return greedy(
      start,
      node,
      candidates.filter((r) => !protectors.get(r.id)),
    );
  };
  const candidate = (node: string, victims: Replica[]): Candidate => ({
    node,
    victims,
    freed: sum(victims.map((v) => v.resources)),
    strongest: victims
      .map((v) => claimed.get(v.id)!)
      .sort(compareClaims)
      .at(-1)!,
  });

  let best = null as Candidate | null;
  const consider = (plan: Candidate) => {
    if (!best || comparePlans(plan, best) < 0) best = plan;
  };
  if (limits.size > 0) {
    // What the limits alone need is the same on every node: chosen once, it is enough on a node where
    // the replica fits once those victims there and its draining replicas have stopped.
    const forLimits = choose({ node: need, limits }, '', underLimit);
    if (!forLimits) return null;
    // The same victims on every node: the plans differ only by node name.
    const fits = [...view.nodes.values()].filter((node) => {
      if (!canHost(node, profile)) return false;
      const freed = sum(forLimits.filter((v) => v.node === node.name).map((v) => v.resources));
      return fitsWithin(need, add(view.freeAfterDrains(node.name), freed));
    });
    if (fits.length > 0) {
      const first = fits.reduce((a, b) => (b.name < a.name ? b : a));
      best = candidate(first.name, forLimits);
    }
  }
  if (!best) {
    // Victims on a node: only nodes where some candidate runs can make room.
    const onNodes = new Map<string, Replica[]>();
    for (const r of lower) {
      if (outermost && isUnder(view, outermost, r)) continue;
      const list = onNodes.get(r.node);
      if (list) list.push(r);
      else onNodes.set(r.node, [r]);
    }
    const { position } = victimOrder(view);
    const nodes = new Set([...onNodes.keys(), ...underLimit.map((r) => r.node)]);
    for (const name of nodes) {
      const node = view.nodes.get(name);
      if (!node || !canHost(node, profile)) continue;
      const onNode = onNodes.get(name) ?? [];
      const candidates = onNode.length
        ? [...underLimit, ...onNode].sort((a, b) => position.get(a.id)! - position.get(b.id)!)
        : underLimit;
      const victims = choose({ node: view.freeAfterDrains(name), limits }, name, candidates);
      if (victims) consider(candidate(name, victims));
    }
  }
  if (!best) return null;
  return {
    node: best.node,
    limit: limits.keys().next().value ?? null,
    claim,
    victims: best.victims.map((r) => ({
      replica: r.id,
      model: r.model,
      owner: view.ownerOf(r),
      node: r.node,
      resources: r.resources,
      claim: claimed.get(r.id)!,
    })),
  };
}

/**
 * The first victim protected by the guarantee of a scope P whose room the new replica would not keep
 * guaranteed, or null. A protected replica is taken only if the new one fits P's guarantee once the
 * victims under P and what drains under P have stopped: else the room P guarantees would turn borrowed,
 * another scope could take it, and P could reclaim it back, in turns (the property tests found that).
 */
export function guaranteeGivenAway(view: View, need: Resources, victims: readonly Replica[]): Replica | null {
  const protectors = protection(view);
  for (const victim of victims) {
    const scope = protectors.get(victim.id);
    if (!scope) continue;
    const guarantee = view.quotas.get(scope)?.guarantee ?? {};
    const leaving = view.active.filter(
      (r) => isUnder(view, scope, r) && (r.state === 'draining' || victims.includes(r)),
    );
    const after = add(subtract(holdsOf(view, scope), sum(leaving.map((r) => r.resources))), need);
    if (!usesAnyOf(need, guarantee) || !fitsWithin(after, guarantee)) return victim;
  }
  return null;
}

/** The candidate frees a dimension still short on the node (it runs there) or under a blocking limit (it is under it). */
function relievesShortage(
  view: View,
  candidate: Replica,
  room: Shortage,
  node: string,
  need: Resources,
): boolean {
  if (candidate.node === node && relieves(candidate.resources, room.node, need)) return true;
  for (const [scope, left] of room.limits) {
    if (isUnder(view, scope, candidate) && relieves(candidate.resources, left, onDimensionsOf(need, left)))
      return true;
  }
  return false;
}

/** The replica fits the node's room and the room of every limit that blocked it. */
export const leavesRoomFor = (need: Resources, room: Shortage): boolean =>
  fitsWithin(need, room.node) && [...room.limits.values()].every((left) => fitsWithin(need, left));

/** The room the victims leave on `node` and under each blocking limit. */
export function roomWith(view: View, start: Shortage, node: string, victims: readonly Replica[]): Shortage {
  const here = victims.filter((v) => v.node === node).map((v) => v.resources);
  const limits = new Map<ScopeKey, Resources>();
  for (const [scope, left] of start.limits) {
    const under = victims.filter((v) => isUnder(view, scope, v)).map((v) => v.resources);
    limits.set(scope, add(left, sum(under)));
  }
  return { node: add(start.node, sum(here)), limits };
}

/** Drops victims the others make spare, last taken first: no proper subset of those left frees enough. */
export function withoutSpares(
  view: View,
  start: Shortage,
  node: string,
  taken: readonly Replica[],
  need: Resources,
): Replica[] {
  let kept = [...taken];
  for (const victim of [...taken].reverse()) {
    const rest = kept.filter((v) => v !== victim);
    if (leavesRoomFor(need, roomWith(view, start, node, rest))) kept = rest;
  }
  return kept;
}
