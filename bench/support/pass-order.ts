/**
 * The order of `items` in pass `pass`: a row of a Williams square, so that over n passes (2n when n is
 * odd) each item runs right after every other equally often, and first equally often. A rotation kept
 * one predecessor for each: in the gateway bench llmgw always ran right after sglang-router in the
 * counted rounds, and with the order reversed its TTFT added p50 at 64 in flight went from 1.16 and
 * 1.19 times vllm-router's to 0.64 (docs/gateway.md "Who runs before whom").
 */
export function passOrder<T>(items: readonly T[], pass: number): T[] {
  const n = items.length;
  // 0, 1, n-1, 2, n-2, ...: each difference between neighbours, modulo n, comes once.
  const first = Array.from({ length: n }, (_, i) => (i === 0 ? 0 : i % 2 === 1 ? (i + 1) / 2 : n - i / 2));
  const rows = n % 2 === 0 ? n : 2 * n;
  const row = pass % rows;
  const order = first.map((index) => items[(index + row) % n]);
  // With n odd, the second n rows are the first n reversed, which gives every pair its other way.
  return row < n ? order : order.reverse();
}
