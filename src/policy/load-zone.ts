import { underSeventyPercent } from './scale-down.ts';

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
