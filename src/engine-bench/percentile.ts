/**
 * The p-th percentile (0..100) of `values`, interpolating linearly between the closest ranks: numpy's
 * default, which `vllm bench serve` uses, so a p95 measured here compares with one it reports.
 * Undefined for no values.
 */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p / 100) * (sorted.length - 1);
  const below = Math.floor(rank);
  const above = Math.min(below + 1, sorted.length - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (rank - below);
}
