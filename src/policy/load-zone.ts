import type { Replica } from '../domain/cluster.ts';
import type { Load, Measurement, Model } from '../domain/model.ts';
import type { PolicySettings } from '../domain/snapshot.ts';
import { loadOf, loadReading } from './load.ts';
import { figuresOfRows, type ModelFigures, modelFigures } from './model-figures.ts';
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
  return standing(modelFigures(view, model), loadOf(view, model.name).inFlight ?? 0);
}

/**
 * loadStanding on the model's own rows, read at `now`: its active replicas, measurements and load. A
 * report is weighed on these alone (reconcilers/load-signals.ts): no view of the store is built for it.
 */
export function loadStandingOf(
  model: Model,
  rows: { replicas: readonly Replica[]; measurements: readonly Measurement[]; load: Load | undefined },
  now: number,
  settings: PolicySettings,
): LoadStanding {
  const byProfile = new Map(rows.measurements.map((m) => [m.profile, m]));
  const figures = figuresOfRows(model, rows.replicas, byProfile, settings);
  return standing(figures, loadReading(rows.load, now, settings).inFlight ?? 0);
}

const standing = (figures: ModelFigures, inFlight: number): LoadStanding => ({
  inFlight,
  capacity: figures.capacity,
  zone: loadZone(inFlight, figures.serving.map(figures.concurrency)),
});

// When a load change wakes a reconciler is decided here, and only here: wakesReconciler for the
// reconciler's side (reconcilers/load-signals.ts), reportsAtOnce for a gateway's counts (which reach
// the reconciler through a report: gateway/load-reporter.ts).

/**
 * Whether a report wakes the reconciler last told at `last`: its zone changed, or its capacity did while
 * it is out of the steady zone (a replica came or went and it may still need to act).
 */
export const wakesReconciler = (
  last: Omit<LoadStanding, 'inFlight'> | undefined,
  now: LoadStanding,
): boolean => !last || last.zone !== now.zone || (now.zone !== 'within' && last.capacity !== now.capacity);

/**
 * Whether a gateway reports a change of its count for a model at once rather than after its gap: when
 * the count rises from none (a model at zero replicas needs its first), or from within the capacity at
 * SLO last answered to above it (the zone `above`, where the reconciler starts a replica). Falls wait for
 * the gap: a replica is removed only after the scale-down window anyway, and a model going between 0 and
 * 1 request would otherwise be reported on every request.
 */
export function reportsAtOnce(before: number, after: number, capacity: number | undefined): boolean {
  if (before === 0) return after > 0;
  if (capacity === undefined) return false;
  return loadZone(before, [capacity]) !== 'above' && loadZone(after, [capacity]) === 'above';
}
