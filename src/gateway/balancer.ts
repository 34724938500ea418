import type { Upstream } from './routing-table.ts';

/**
 * The replica a request goes to: of the candidates, the one with the fewest requests in flight from
 * this gateway, ties broken at random so that idle replicas share the first requests. Undefined when
 * there is no candidate.
 */
export function pickReplica(
  candidates: readonly Upstream[],
  inFlight: (id: string) => number,
  random: () => number = Math.random,
): Upstream | undefined {
  let fewest = Number.POSITIVE_INFINITY;
  let tied: Upstream[] = [];
  for (const candidate of candidates) {
    const count = inFlight(candidate.id);
    if (count < fewest) {
      fewest = count;
      tied = [candidate];
    } else if (count === fewest) {
      tied.push(candidate);
    }
  }
  return tied[Math.floor(random() * tied.length)];
}
