import type { Replica } from '../domain/cluster.ts';
import type { Claim, Victim } from '../domain/decision.ts';
import type { Model, Profile } from '../domain/model.ts';
import type { Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import {
  chainOf,
  compareAtParting,
  compareClaims,
  compareInOrder,
  type Ranked,
  ranked,
  rankedOf,
} from './claim-order.ts';
import { claimOf } from './claims.ts';
import { protection } from './guarantee.ts';
import { countedOnce, holdsOf, holdsOnceDrained, victimsOf } from './holdings.ts';
import { canHost, hostsOf } from './placement.ts';
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
 * the model's own, started (a pending one may stand on room its own victims still hold, where a
 * guarantee that did not take them may count it borrowed until they stop: taking it would undo that
 * preemption in turns),
 * of a strictly lower claim, and not protected by the guarantee of a scope off the model's owner chain
 * (guarantees still protect across scopes).
 */
export function preemptible(view: View, model: Model, claim: Claim): (replica: Replica) => boolean {
  const mine = ranked(view, model, claim);
  const mayBe = mayBeVictim(view, model, mine);
  return (replica) => {
    if (!mayBe(replica)) return false;
    const its = rankedOf(view, replica);
    return its !== undefined && compareClaims(its, mine) < 0;
  };
}

/**
 * All `preemptible` asks of a replica except a strictly lower claim, and not stronger where the two
 * chains part (what claims compare first): a test that figures no tier, so it may go first.
 */
function mayBeVictim(view: View, model: Model, mine: Ranked): (replica: Replica) => boolean {
  const chain = view.chain(model.owner);
  const protectors = protection(view);
  return (replica) => {
    if (replica.model === model.name || replica.state === 'draining' || replica.state === 'pending') {
      return false;
    }
    const its = view.models.get(replica.model);
    if (its && compareAtParting(chainOf(view, its), mine) > 0) return false;
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
 * the limit sets: L(S) - holds(S) + what that frees under S. Room draining for another model is that
 * model's, so it does not count. What frees is the victims preempted for the model, and those reclaimed
 * for its reservations, less the part of them holds(S) already counts for those reservations instead
 * (holdings.ts countedOnce): that room is taken once they stop.
 */
export function limitRoom(view: View, model: Model, scope: ScopeKey): Resources {
  const limit = view.quotas.get(scope)?.limit ?? {};
  const victims = new Set(drainingFor(view, model, scope));
  let handedOver: Resources = {};
  for (const reservation of view.replicasOfModel(model.name)) {
    const its = victimsOf(view, reservation);
    if (its.length === 0) continue;
    for (const v of its) if (isUnder(view, scope, v)) victims.add(v);
    handedOver = add(handedOver, subtract(reservation.resources, countedOnce(view, reservation, scope)));
  }
  const coming = subtract(sum([...victims].map((r) => r.resources)), handedOver);
  return onDimensionsOf(add(subtract(limit, holdsOf(view, scope)), coming), limit);
}

/**
 * The started replicas with a claim among `replicas`, in victim order:
 * 1. the lowest claim first (compareInOrder: those that may be victims are already lower than the new one's);
 * 2. the newest first.
 */
function inVictimOrder(view: View, replicas: readonly Replica[]): Replica[] {
  const list: { replica: Replica; claim: Ranked }[] = [];
  for (const replica of replicas) {
    if (replica.state !== 'starting' && replica.state !== 'ready') continue;
    const claim = rankedOf(view, replica);
    if (claim) list.push({ replica, claim });
  }
  list.sort((a, b) => compareInOrder(a.claim, b.claim) || olderFirst(b.replica, a.replica));
  return list.map(({ replica }) => replica);
}

/** Models by owner: the replicas under a scope are those of the models it and the scopes beneath it own. */
const modelsByOwner = perView((view) => {
  const byOwner = new Map<ScopeKey, Model[]>();
  for (const model of view.models.values()) {
    if (model.owner === null) continue;
    const list = byOwner.get(model.owner);
    if (list) list.push(model);
    else byOwner.set(model.owner, [model]);
  }
  return byOwner;
});

/**
 * Started replicas under each scope asked for, in victim order. Made when a plan first asks, not for
 * every scope: a pass asks for a few limiting scopes, many times.
 */
const underScope = perView(() => new Map<ScopeKey, Replica[]>());

function victimsUnder(view: View, scope: ScopeKey): readonly Replica[] {
  const known = underScope(view);
  let victims = known.get(scope);
  if (!victims) {
    const under: Replica[] = [];
    for (const [owner, models] of modelsByOwner(view)) {
      if (!view.chain(owner).includes(scope)) continue;
      for (const model of models) under.push(...view.replicasOfModel(model.name));
    }
    victims = inVictimOrder(view, under);
    known.set(scope, victims);
  }
  return victims;
}

/** Nodes by name: the first that fits is the one a plan of equal victims picks. */
const nodesByName = perView((view) => [...view.nodes.values()].sort((a, b) => (a.name < b.name ? -1 : 1)));

/** How many replicas at the head of a list in victim order sort before `claim` (binary search). */
function sortedBefore(view: View, ordered: readonly Replica[], claim: Ranked): number {
  let low = 0;
  let high = ordered.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (compareInOrder(rankedOf(view, ordered[middle])!, claim) < 0) low = middle + 1;
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
  strongest: Ranked;
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
    compareInOrder(a.strongest, b.strongest) ||
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
  const mine = ranked(view, model, claim);
  const eligible = preemptible(view, model, claim);
  // Every victim sorts before the new replica's claim (compareInOrder agrees with compareClaims): only
  // that prefix of the list is looked at.
  const under = outermost ? victimsUnder(view, outermost) : [];
  const underLimit = under.slice(0, sortedBefore(view, under, mine)).filter(eligible);
  if (outermost && underLimit.length === 0) return null;

  const protectors = protection(view);
  const greedy = (start: Shortage, node: string, candidates: readonly Replica[]): Replica[] | null => {
    const taken: Replica[] = [];
    let room = start;
    for (const candidate of candidates) {
      if (leavesRoomFor(need, room)) break;
      if (!relievesShortage(view, candidate, room, node, need)) continue;
      taken.push(candidate);
      room = withVictim(view, room, node, candidate, 1);
    }
    if (taken.length === 0 || !leavesRoomFor(need, room)) return null;
    return withoutSpares(view, start, node, taken, need);
  };
  // Protected victims only when the new replica keeps their guarantee's room guaranteed; else without.
  // Never room a guarantee off the chain would take back (guaranteeOpened).
  const choose = (start: Shortage, node: string, all: readonly Replica[]) => {
    const candidates = openingNoGuarantee(view, model, need, all);
    const victims = greedy(start, node, candidates);
    if (!victims || !guaranteeGivenAway(view, need, victims)) return victims;
    return greedy(
      start,
      node,
      candidates.filter((r) => !protectors.get(r.id)),
    );
  };
  const planOn = (node: string, victims: Replica[]): Candidate => ({
    node,
    victims,
    freed: sum(victims.map((v) => v.resources)),
    strongest: victims
      .map((v) => rankedOf(view, v)!)
      .sort(compareInOrder)
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
    // The same victims on every node: the plans differ only by node name, so the first that fits.
    const freedOn = new Map<string, Resources>();
    for (const v of forLimits) freedOn.set(v.node, add(freedOn.get(v.node) ?? {}, v.resources));
    const first = nodesByName(view).find(
      (node) =>
        canHost(node, profile) &&
        fitsWithin(need, add(view.freeAfterDrains(node.name), freedOn.get(node.name) ?? {})),
    );
    if (first) best = planOn(first.name, forLimits);
  }
  if (!best) {
    // Victims on a node: only nodes where some candidate runs can make room.
    const limitNodes = new Set(underLimit.map((r) => r.node));
    const mayBe = mayBeVictim(view, model, mine);
    for (const node of hostsOf(view, profile)) {
      // A node frees at most its room once drained plus all that may be victims there: where even that
      // is too little, no plan is made on it, and its replicas' claims are not figured.
      const mayGo = view.replicasOnNode(node.name).filter(mayBe);
      const most = add(view.freeAfterDrains(node.name), sum(mayGo.map((r) => r.resources)));
      if (!fitsWithin(need, most)) continue;
      const onNode = inVictimOrder(
        view,
        mayGo.filter((r) => eligible(r) && !(outermost && isUnder(view, outermost, r))),
      );
      if (onNode.length === 0 && !limitNodes.has(node.name)) continue;
      const candidates = onNode.length ? inVictimOrder(view, [...underLimit, ...onNode]) : underLimit;
      const victims = choose({ node: view.freeAfterDrains(node.name), limits }, node.name, candidates);
      if (victims) consider(planOn(node.name, victims));
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
      claim: claimOf(view, r)!,
    })),
  };
}

/**
 * The first victim protected by the guarantee of a scope P whose room the new replica would not keep
 * guaranteed, or null. A protected replica is taken only if the new one fits P's guarantee, and that of
 * every ancestor of P it draws on (guarantees nest), once the victims and what drains there have
 * stopped: else the room P guarantees would turn borrowed, another scope could take it, and P could
 * reclaim it back, in turns (the property tests found that, once through an ancestor's smaller guarantee).
 */
export function guaranteeGivenAway(view: View, need: Resources, victims: readonly Replica[]): Replica | null {
  const protectors = protection(view);
  for (const victim of victims) {
    const scope = protectors.get(victim.id);
    if (scope && !keepsGuaranteed(view, scope, need, victims)) return victim;
  }
  return null;
}

/**
 * The first victim whose leaving puts a scope off the model's owner chain within its guarantee on a
 * dimension where it was not, with that scope; or null. Such a victim is borrowed (a protected one is
 * never taken across scopes), but part of its room is guaranteed room: once it stops, the scope may
 * reclaim the new replica, which is borrowed when no guarantee of its own chain covers it, and the two
 * take turns (the property tests found it: a 2-GPU replica of a team holding 7 GPUs under a guarantee
 * of 6, preempted for a model of a higher priority at the root).
 */
export function guaranteeOpened(
  view: View,
  model: Model,
  need: Resources,
  victims: readonly Replica[],
): { victim: Replica; scope: ScopeKey } | null {
  const leaving = new Map<ScopeKey, Resources>();
  for (const victim of victims) {
    const scope = takeLeaving(view, model, need, leaving, victim);
    if (scope) return { victim, scope };
  }
  return null;
}

/** The candidates, in their order, that together open no guarantee off the model's chain. */
function openingNoGuarantee(
  view: View,
  model: Model,
  need: Resources,
  candidates: readonly Replica[],
): Replica[] {
  const leaving = new Map<ScopeKey, Resources>();
  return candidates.filter((candidate) => takeLeaving(view, model, need, leaving, candidate) === null);
}

/**
 * Adds the victim to what leaves each scope of its chain, unless that opens the guarantee of one off the
 * model's chain: then returns that scope and changes nothing.
 */
function takeLeaving(
  view: View,
  model: Model,
  need: Resources,
  leaving: Map<ScopeKey, Resources>,
  victim: Replica,
): ScopeKey | null {
  const chain = view.chain(model.owner);
  const after = new Map(leaving);
  for (const key of view.chain(view.ownerOf(victim)))
    after.set(key, add(after.get(key) ?? {}, victim.resources));
  const before = holdsOnceDrained(view);
  // The new replica adds to the scopes it shares with its victims.
  const holdsAfter = (key: ScopeKey) =>
    subtract(add(before.get(key) ?? {}, chain.includes(key) ? need : {}), after.get(key) ?? {});
  for (const key of view.chain(view.ownerOf(victim))) {
    if (chain.includes(key) || !view.quotas.get(key)?.guarantee) continue;
    const opened = Object.keys(victim.resources).some(
      (d) =>
        isOpen(view, key, d as keyof Resources, holdsAfter) &&
        !isOpen(view, key, d as keyof Resources, (k) => before.get(k) ?? {}),
    );
    if (opened) return key;
  }
  for (const [key, left] of after) leaving.set(key, left);
  return null;
}

/**
 * Whether `scope` is within its guarantee on `dimension` with these holds: its guarantee and that of
 * every ancestor that sets the dimension hold more than the scope does (guarantees nest, reclaimingScope).
 */
function isOpen(
  view: View,
  scope: ScopeKey,
  dimension: keyof Resources,
  holds: (key: ScopeKey) => Resources,
): boolean {
  const own = view.quotas.get(scope)?.guarantee?.[dimension];
  if (own === undefined) return false;
  return view.chain(scope).every((key) => {
    const guaranteed = view.quotas.get(key)?.guarantee?.[dimension];
    return guaranteed === undefined || (holds(key)[dimension] ?? 0) < guaranteed;
  });
}

/**
 * The new replica fits the guarantee of `scope` (which must guarantee a dimension it uses) and of each
 * ancestor that guarantees one, once the victims and what drains under each have stopped.
 */
function keepsGuaranteed(view: View, scope: ScopeKey, need: Resources, victims: readonly Replica[]): boolean {
  return view.chain(scope).every((key) => {
    const guarantee = view.quotas.get(key)?.guarantee;
    if (!guarantee || !usesAnyOf(need, guarantee)) return key !== scope;
    const leaving = sum(victims.filter((v) => isUnder(view, key, v)).map((v) => v.resources));
    const staying = holdsOnceDrained(view).get(key) ?? {};
    return fitsWithin(add(subtract(staying, leaving), need), guarantee);
  });
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
export function leavesRoomFor(need: Resources, room: Shortage): boolean {
  if (!fitsWithin(need, room.node)) return false;
  for (const left of room.limits.values()) if (!fitsWithin(need, left)) return false;
  return true;
}

/** The room the victims leave on `node` and under each blocking limit. */
export function roomWith(view: View, start: Shortage, node: string, victims: readonly Replica[]): Shortage {
  return victims.reduce((room, victim) => withVictim(view, room, node, victim, 1), start);
}

/** The room once the victim stops (sign 1), or without it (sign -1): on `node`, and under each limit it is under. */
function withVictim(view: View, room: Shortage, node: string, victim: Replica, sign: 1 | -1): Shortage {
  const change = (left: Resources) =>
    sign > 0 ? add(left, victim.resources) : subtract(left, victim.resources);
  // Rooms are never changed in place, so a victim under no blocking limit shares the map it was given.
  let limits = room.limits;
  for (const [scope, left] of room.limits) {
    if (!isUnder(view, scope, victim)) continue;
    if (limits === room.limits) limits = new Map(room.limits);
    limits.set(scope, change(left));
  }
  return { node: victim.node === node ? change(room.node) : room.node, limits };
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
  let room = roomWith(view, start, node, taken);
  for (const victim of [...taken].reverse()) {
    const without = withVictim(view, room, node, victim, -1);
    if (leavesRoomFor(need, without)) {
      kept = kept.filter((v) => v !== victim);
      room = without;
    }
  }
  return kept;
}
