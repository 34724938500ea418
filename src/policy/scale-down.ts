import type { Replica } from '../domain/cluster.ts';
import type { Model } from '../domain/model.ts';
import { isBorrowed } from './guarantee.ts';
import { overLimitDimensions } from './limits.ts';
import type { ModelFigures } from './model-figures.ts';
import { olderFirst, type View } from './view.ts';

/** `L <= 0.7 rest` in whole tenths: exact for whole figures (0.7 * 3 is 2.0999... in floats). */
export const underSeventyPercent = (load: number, rest: number): boolean => load * 10 <= rest * 7;

/**
 * A model's replicas in the order scale-down takes them back (POLICY.md "Scaling a model"):
 * 1. while a scope on the owner's chain holds more than its limit: replicas that use a dimension it
 *    passes come first, and among them the newest first (criteria 2 and 3 do not apply to them);
 * 2. borrowed before protected;
 * 3. least preferred profile first (a profile gone from the spec counts as least preferred);
 * 4. newest first;
 * 5. replica ID, through the age order.
 */
export function removalOrder(
  view: View,
  model: Model,
  figures: ModelFigures,
): (a: Replica, b: Replica) => number {
  const over = [...overLimitDimensions(view, model.owner)];
  const rank = new Map(figures.profiles.map((p, i) => [p.name, i]));
  const beyondLimit = (r: Replica) => over.some((d) => (r.resources[d] ?? 0) > 0);
  const preference = (r: Replica) => rank.get(r.profile) ?? figures.profiles.length;
  return (a, b) => {
    const beyond = beyondLimit(a);
    if (beyond !== beyondLimit(b)) return beyond ? -1 : 1;
    if (!beyond) {
      const borrowed = isBorrowed(view, a.id);
      if (borrowed !== isBorrowed(view, b.id)) return borrowed ? -1 : 1;
      const byProfile = preference(b) - preference(a);
      if (byProfile !== 0) return byProfile;
    }
    return olderFirst(b, a);
  };
}

export interface Removable {
  replica: Replica;
  /** C - c(r): the capacity at SLO left without it. */
  rest: number;
}

/**
 * The first replica in removal order whose removal keeps the load under 70% of the rest
 * (`L <= 0.7 (C - c(r))`), the capacity `keep` (the load and the headroom kept for its bursts,
 * load-growth.ts), min_replicas and the target throughput; null when none. The scale-down
 * condition holds exactly while there is one: a replica that is first in the order but would break
 * one of these does not stop a later one from going.
 */
export function removable(
  model: Model,
  figures: ModelFigures,
  load: number,
  order: (a: Replica, b: Replica) => number,
  keep = load,
): Removable | null {
  if (figures.serving.length - 1 < model.min_replicas) return null;
  const target = model.target_tokens_per_sec;
  for (const replica of [...figures.serving].sort(order)) {
    const rest = figures.capacity - figures.concurrency(replica);
    if (!underSeventyPercent(load, rest) || rest < keep) continue;
    if (target !== undefined && figures.tokensPerSec - figures.throughput(replica) < target) continue;
    return { replica, rest };
  }
  return null;
}
