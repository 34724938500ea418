import type { Model } from '../domain/model.ts';
import { loadOf } from './load.ts';
import { modelFigures } from './model-figures.ts';
import { underSeventyPercent } from './scale-down.ts';
import type { View } from './view.ts';

/**
 * Where a model's load stands against its capacity at SLO, as far as waking its reconciler goes:
 * - above: more in flight than capacity (or any load and no replica): it may need a replica;
 * - below: the rest would stay under 70% of theirs without the smallest replica: it may shed one;
 * - within: neither; the reconciler has nothing to react to.
 * The API signals a reconciler only when this changes, so history stays small.
 */
export type LoadZone = 'above' | 'below' | 'within';

export function loadZone(inFlight: number, replicaConcurrency: readonly number[]): LoadZone {
  const capacity = replicaConcurrency.reduce((total, c) => total + c, 0);
  if (inFlight > capacity) return 'above';
  if (
    replicaConcurrency.length > 1 &&
    underSeventyPercent(inFlight, capacity - Math.min(...replicaConcurrency))
  ) {
    return 'below';
  }
  return 'within';
}

/** What a load report is weighed on: the model's load (0 when unknown), its capacity at SLO and its zone. */
export interface LoadStanding {
  inFlight: number;
  capacity: number;
  zone: LoadZone;
}

export function loadStanding(view: View, model: Model): LoadStanding {
  const figures = modelFigures(view, model);
  const inFlight = loadOf(view, model.name).inFlight ?? 0;
  return {
    inFlight,
    capacity: figures.capacity,
    zone: loadZone(inFlight, figures.serving.map(figures.concurrency)),
  };
}

/**
 * Whether a report wakes the reconciler last told at `last`: its zone changed, or its capacity did while
 * it is out of the steady zone (a replica came or went and it may still need to act).
 */
export const wakesReconciler = (
  last: Omit<LoadStanding, 'inFlight'> | undefined,
  now: LoadStanding,
): boolean => !last || last.zone !== now.zone || (now.zone !== 'within' && last.capacity !== now.capacity);
