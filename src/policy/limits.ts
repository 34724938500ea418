import type { Dimension, Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { holdsOf } from './holdings.ts';
import { add, dimensionsOf, exceeding } from './resources.ts';
import type { View } from './view.ts';

export interface BlockingLimit {
  scope: ScopeKey;
  /** The first dimension on which holds + R would pass the limit. */
  dimension: Dimension;
  /** holds(S) before the new replica. */
  holds: Resources;
  /** L(S). */
  limit: Resources;
}

/**
 * The nearest scope on the owner's chain whose limit a new replica of resources `r` would pass
 * (`holds(S) + r > L(S)` on a dimension L sets), or null when it may start.
 */
export function blockingLimit(view: View, owner: ScopeKey | null, r: Resources): BlockingLimit | null {
  for (const scope of view.chain(owner)) {
    const limit = view.quotas.get(scope)?.limit;
    if (!limit) continue;
    const held = holdsOf(view, scope);
    const dimension = exceeding(add(held, r), limit);
    if (dimension) return { scope, dimension, holds: held, limit };
  }
  return null;
}

/**
 * The dimensions on which some scope of the chain holds more than its limit (after a limit was
 * lowered): scale-down takes back replicas that use them first.
 */
export function overLimitDimensions(view: View, owner: ScopeKey | null): Set<Dimension> {
  const over = new Set<Dimension>();
  for (const scope of view.chain(owner)) {
    const limit = view.quotas.get(scope)?.limit;
    if (!limit) continue;
    const held = holdsOf(view, scope);
    for (const d of dimensionsOf(limit)) if ((held[d] ?? 0) > limit[d]!) over.add(d);
  }
  return over;
}
