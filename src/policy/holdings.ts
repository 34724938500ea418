import type { Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { addInto, complete, zero } from './resources.ts';
import { perView, type View } from './view.ts';

/**
 * holds(S) for every scope (zero when nothing): the resources of the active replicas of every model
 * owned by S or a scope beneath it. Replicas of a model without owner count toward no scope.
 */
export const holdings: (view: View) => Map<ScopeKey, Resources> = perView((view) => {
  const holds = new Map<ScopeKey, Required<Resources>>();
  for (const key of view.scopes.keys()) holds.set(key, complete({}));
  for (const replica of view.active) {
    for (const key of view.chain(view.ownerOf(replica))) addInto(holds.get(key)!, replica.resources);
  }
  return holds;
});

/** holds(S). */
export const holdsOf = (view: View, scope: ScopeKey): Resources => holdings(view).get(scope) ?? zero();
