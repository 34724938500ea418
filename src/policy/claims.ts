import type { Replica } from '../domain/cluster.ts';
import type { Claim } from '../domain/decision.ts';
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

/**
 * The claims of each model's serving replicas, oldest first, figured when first asked for: a pass asks
 * for the replicas of a few scopes and nodes only.
 */
const figured = perView(() => new Map<string, { serving: readonly Replica[]; claims: Claim[] }>());

/** The claims of the model's serving replicas, oldest first (with those replicas). */
export function claimsOfModel(
  view: View,
  model: Model,
): { serving: readonly Replica[]; claims: readonly Claim[] } {
  const byModel = figured(view);
  let ofModel = byModel.get(model.name);
  if (!ofModel) {
    ofModel = figureClaims(view, model);
    byModel.set(model.name, ofModel);
  }
  return ofModel;
}

/** The claim of a serving replica (pending, starting, ready); undefined for a draining one or one of a model gone. */
export function claimOf(view: View, replica: Replica): Claim | undefined {
  const model = view.models.get(replica.model);
  if (!model) return undefined;
  const ofModel = claimsOfModel(view, model);
  const k = ofModel.serving.findIndex((r) => r.id === replica.id);
  return k < 0 ? undefined : ofModel.claims[k];
}

function figureClaims(view: View, model: Model): { serving: readonly Replica[]; claims: Claim[] } {
  const figures = modelFigures(view, model);
  const needed = neededReplicas(view, model, figures);
  return { serving: figures.serving, claims: figures.serving.map((_, i) => claimAt(model, i + 1, needed)) };
}

/** The claim of the replica a model adds next: floor up to min_replicas, else demand (something asks for it). */
export const nextClaim = (model: Model, serving: number): Claim => claimAt(model, serving + 1, serving + 1);
