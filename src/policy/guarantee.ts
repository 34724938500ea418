import type { Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { countedOnce } from './holdings.ts';
import { add, fitsWithin, usesAnyOf, zero } from './resources.ts';
import { perView, type View } from './view.ts';

/**
 * For every active replica, the nearest scope on its owner's chain whose guarantee it fits, or null
 * when it is borrowed (POLICY.md "Guarantee: protected and borrowed").
 *
 * Each scope S with a guarantee walks all active replicas under S oldest first: a replica is taken if
 * it uses a dimension G(S) sets and, added to those taken before, stays <= G(S); else it is skipped
 * and later, smaller ones may still fit. Guarantees nest: S takes a replica only if every ancestor of
 * S whose guarantee the replica draws on takes it too, so a child's guarantee is carved out of its
 * ancestors' and never adds to them (a project guaranteed 1,000 GPUs under a team guaranteed 8
 * protects at most 8). One pass over the replicas in age order runs every walk side by side, each
 * chain from the org down.
 *
 * A reservation that waits for its victims adds to what a scope took only what the victims the scope
 * took do not cover (holdings.ts countedOnce): the room they share is taken once, by the victims until
 * they stop, so it fits the guarantee now exactly when it will once they have stopped.
 *
 * A model without owner (or whose owner names no scope) has an empty chain: no guarantee covers its
 * replicas, so they are always borrowed and may be reclaimed by any scope within its guarantee.
 */
export const protection: (view: View) => Map<string, ScopeKey | null> = perView((view) => {
  const taken = new Map<ScopeKey, Resources>();
  const protector = new Map<string, ScopeKey | null>();
  // The scopes that took each victim still draining for a reservation: the reservation, walked after
  // them (it is younger), is covered only by what a scope took.
  const tookVictim = new Map<string, Set<ScopeKey>>();
  for (const replica of view.active) {
    let by: ScopeKey | null = null;
    const chain = view.chain(view.ownerOf(replica));
    const took = replica.reclaimed_for && replica.state === 'draining' ? new Set<ScopeKey>() : null;
    if (took) tookVictim.set(replica.id, took);
    for (let i = chain.length - 1; i >= 0; i--) {
      const key = chain[i];
      const guarantee = view.quotas.get(key)?.guarantee;
      if (!guarantee || !usesAnyOf(replica.resources, guarantee)) continue;
      const counted = countedOnce(view, replica, key, (v) => tookVictim.get(v.id)?.has(key) ?? false);
      const after = add(taken.get(key) ?? {}, counted);
      // An ancestor that does not take it leaves nothing for the scopes beneath it to take.
      if (!fitsWithin(after, guarantee)) break;
      taken.set(key, after);
      took?.add(key);
      by = key;
    }
    protector.set(replica.id, by);
  }
  return protector;
});

export const isBorrowed = (view: View, replicaId: string): boolean =>
  protection(view).get(replicaId) === null;

/**
 * borrowed(S) for every scope (zero when nothing): the resources of the borrowed replicas under S,
 * which is what could be reclaimed from S, each counted as holds(S) counts it (`countedOnce`), so that
 * borrowed(S) never counts a room twice and never exceeds holds(S).
 */
export const borrowedByScope: (view: View) => Map<ScopeKey, Resources> = perView((view) => {
  const borrowed = new Map<ScopeKey, Resources>();
  for (const key of view.scopes.keys()) borrowed.set(key, zero());
  for (const replica of view.active) {
    if (!isBorrowed(view, replica.id)) continue;
    for (const key of view.chain(view.ownerOf(replica))) {
      borrowed.set(key, add(borrowed.get(key)!, countedOnce(view, replica, key)));
    }
  }
  return borrowed;
});
