import type { ServedRequest } from './serving-pool.ts';

/**
 * The most requests in flight at once within [from, until) if none ever waited: what a policy would
 * have to serve at that moment. Sizes the static allocation and the replicas the run starts with.
 */
export function peakConcurrency(
  requests: readonly ServedRequest[],
  from = -Infinity,
  until = Infinity,
): number {
  const edges: [number, number][] = [];
  for (const r of requests) {
    const end = r.at + r.serviceMs;
    if (end <= from || r.at >= until) continue;
    edges.push([Math.max(r.at, from), 1], [end, -1]);
  }
  edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let current = 0;
  let peak = 0;
  for (const [, step] of edges) {
    current += step;
    peak = Math.max(peak, current);
  }
  return peak;
}
