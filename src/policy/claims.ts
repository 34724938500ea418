import type { Replica } from '../domain/cluster.ts';
import { type Claim, TIERS } from '../domain/decision.ts';
import type { Model } from '../domain/model.ts';
import { loadOf } from './load.ts';
import { type ModelFigures, modelFigures } from './model-figures.ts';
import { perView, type View } from './view.ts';

/**
 * The fewest of the model's serving replicas, oldest first, that its min_replicas, its load and its
 * target throughput need. Unknown load calls none of them surplus: what cannot be judged is not taken.
 */
export function neededReplicas(view: View, model: Model, figures: ModelFigures): number {
  const n = figures.serving.length;
  const load = loadOf(view, model.name).inFlight;
  if (load === null) return Math.max(model.min_replicas, n);
  const covering = (wanted: number, figure: (r: Replica) => number): number => {
    let total = 0;
    for (let k = 0; k < n; k++) {
      if (total >= wanted) return k;
      total += figure(figures.serving[k]);
    }
    return n;
  };
  const forTarget =
    model.target_tokens_per_sec === undefined ? 0 : covering(model.target_tokens_per_sec, figures.throughput);
  return Math.max(model.min_replicas, covering(load, figures.concurrency), forTarget);
}

/** The claim of a model's k-th serving replica, oldest first, when its first `needed` are needed. */
function claimAt(model: Model, k: number, needed: number): Claim {
  const tier = k <= model.min_replicas ? 'floor' : k <= needed ? 'demand' : 'surplus';
  return { priority: model.priority ?? 0, tier, k, of: model.min_replicas };
}

/** The claim of every serving replica (pending, starting, ready) of the models in the view. */
export const claims: (view: View) => Map<string, Claim> = perView((view) => {
  const byReplica = new Map<string, Claim>();
  for (const model of view.models.values()) {
    const figures = modelFigures(view, model);
    if (figures.serving.length === 0) continue;
    const needed = neededReplicas(view, model, figures);
    figures.serving.forEach((replica, i) => {
      byReplica.set(replica.id, claimAt(model, i + 1, needed));
    });
  }
  return byReplica;
});

/** The claim of the replica a model adds next: floor up to min_replicas, else demand (something asks for it). */
export const nextClaim = (model: Model, serving: number): Claim => claimAt(model, serving + 1, serving + 1);

/** Each tier by its place in TIERS, weakest first. */
const TIER_ORDER: Record<Claim['tier'], number> = Object.fromEntries(
  TIERS.map((tier, i) => [tier, i]),
) as Record<Claim['tier'], number>;

/** Within the floor tier a model's 1st replica outranks another's 2nd; the other tiers have no rank. */
const rankOf = (claim: Claim): number => (claim.tier === 'floor' ? -claim.k : 0);

/**
 * Claims compared, stronger first (positive when a is stronger):
 * 1. model priority, higher first;
 * 2. tier: floor, then demand, then surplus;
 * 3. rank within the floor tier: the lower k first.
 */
export function compareClaims(a: Claim, b: Claim): number {
  return a.priority - b.priority || TIER_ORDER[a.tier] - TIER_ORDER[b.tier] || rankOf(a) - rankOf(b);
}
