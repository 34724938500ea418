import type { Replica } from '../domain/cluster.ts';
import type { Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { addInto, complete, subtract, zero } from './resources.ts';
import { isUnder, perView, type View } from './view.ts';

/** The victims still draining for each reservation that is still pending, by the reservation's ID. */
const drainingForReservation = perView((view) => {
  const pending = new Set(view.active.filter((r) => r.state === 'pending').map((r) => r.id));
  const byReservation = new Map<string, Replica[]>();
  for (const r of view.active) {
    if (r.state !== 'draining' || !r.reclaimed_for || !pending.has(r.reclaimed_for)) continue;
    const list = byReservation.get(r.reclaimed_for);
    if (list) list.push(r);
    else byReservation.set(r.reclaimed_for, [r]);
  }
  return byReservation;
});

/** The victims draining for the reservation (it is pending, they were reclaimed or preempted for it). */
export const victimsOf = (view: View, reservation: Replica): readonly Replica[] =>
  drainingForReservation(view).get(reservation.id) ?? [];

/**
 * What a replica counts toward what `scope` holds (POLICY.md "Holding": room is counted once).
 *
 * A replica reserved by a reclaim or a preemption stands on room its victims hold until they stop: it
 * starts only then. Where a scope counts both, the victims count until they stop and the reservation
 * only for what they do not cover (per dimension, what it needs beyond what they hold). So what a scope
 * holds is at every moment what it will hold once the victims stop, or what runs now, whichever is more,
 * and never the same room twice. A scope above the reservation but not above its victims counts it
 * whole, as one above the victims alone counts them.
 *
 * `counts` narrows the victims the scope counts (the guarantee walk: those it took); by default all
 * under it. Every figure of holds and borrowed reads this function: the limits, the guarantee walk, the
 * store's reading through them, the API, the console and the metrics.
 */
export function countedOnce(
  view: View,
  replica: Replica,
  scope: ScopeKey,
  counts?: (victim: Replica) => boolean,
): Resources {
  if (replica.state !== 'pending') return replica.resources;
  const victims = drainingForReservation(view).get(replica.id);
  if (!victims) return replica.resources;
  const covered = complete({});
  for (const v of victims) {
    if (isUnder(view, scope, v) && (counts === undefined || counts(v))) addInto(covered, v.resources);
  }
  return beyond(replica.resources, covered);
}

/** r less `covered`, never below 0, on the dimensions r sets. */
function beyond(r: Resources, covered: Resources): Resources {
  const left = subtract(r, covered);
  const out: Resources = {};
  if (r.gpus !== undefined) out.gpus = Math.max(0, left.gpus!);
  if (r.cores !== undefined) out.cores = Math.max(0, left.cores!);
  if (r.memory_gib !== undefined) out.memory_gib = Math.max(0, left.memory_gib!);
  return out;
}

/**
 * holds(S) for every scope (zero when nothing): the resources of the active replicas of every model
 * owned by S or a scope beneath it, each room counted once (`countedOnce`). Replicas of a model
 * without owner count toward no scope.
 */
export const holdings: (view: View) => Map<ScopeKey, Resources> = perView((view) => {
  const holds = new Map<ScopeKey, Required<Resources>>();
  for (const key of view.scopes.keys()) holds.set(key, complete({}));
  for (const replica of view.active) {
    for (const key of view.chain(view.ownerOf(replica))) {
      addInto(holds.get(key)!, countedOnce(view, replica, key));
    }
  }
  return holds;
});

/** holds(S). */
export const holdsOf = (view: View, scope: ScopeKey): Resources => holdings(view).get(scope) ?? zero();

/**
 * What the scope will hold once every replica draining under it has stopped: its pending, starting and
 * ready replicas, each whole (the room a reservation shares with its victims is then its own).
 */
export const holdsOnceDrained: (view: View) => Map<ScopeKey, Resources> = perView((view) => {
  const holds = new Map<ScopeKey, Required<Resources>>();
  for (const key of view.scopes.keys()) holds.set(key, complete({}));
  for (const replica of view.active) {
    if (replica.state === 'draining') continue;
    for (const key of view.chain(view.ownerOf(replica))) addInto(holds.get(key)!, replica.resources);
  }
  return holds;
});
