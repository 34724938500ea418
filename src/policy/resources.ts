import { DIMENSIONS, type Dimension, type Resources } from '../domain/resources.ts';

/** Every dimension set, an absent one as 0: a node's capacity as room to fit into. */
export function complete(r: Resources): Required<Resources> {
  return { gpus: r.gpus ?? 0, cores: r.cores ?? 0, memory_gib: r.memory_gib ?? 0 };
}

/** Every dimension set to zero: what a scope or node holds when nothing runs. */
export const zero = (): Resources => complete({});

// Sums of fractional cores and GiB drift (0.1 + 0.2); nine decimals is far below any real amount.
const round = (x: number) => Math.round(x * 1e9) / 1e9;

/** x + sign * y, or undefined when neither is set. */
const amount = (x: number | undefined, y: number | undefined, sign: 1 | -1): number | undefined =>
  x === undefined && y === undefined ? undefined : round((x ?? 0) + sign * (y ?? 0));

// Each dimension spelled out, in DIMENSIONS order: a loop storing under computed keys (out[d]) was
// several times slower, and this is the policy's hottest function (bench/policy-pass).
function combine(a: Resources, b: Resources, sign: 1 | -1): Resources {
  const out: Resources = {};
  const gpus = amount(a.gpus, b.gpus, sign);
  if (gpus !== undefined) out.gpus = gpus;
  const cores = amount(a.cores, b.cores, sign);
  if (cores !== undefined) out.cores = cores;
  const memory = amount(a.memory_gib, b.memory_gib, sign);
  if (memory !== undefined) out.memory_gib = memory;
  return out;
}

/** a + b on every dimension either sets (an absent amount is 0). */
export const add = (a: Resources, b: Resources): Resources => combine(a, b, 1);

/** total += r, in place: a running total (holds(S)) built without a new object per replica. */
export function addInto(total: Required<Resources>, r: Resources): void {
  total.gpus = amount(total.gpus, r.gpus, 1)!;
  total.cores = amount(total.cores, r.cores, 1)!;
  total.memory_gib = amount(total.memory_gib, r.memory_gib, 1)!;
}

/** a - b on every dimension either sets; may go negative (e.g. a node's room while victims drain). */
export const subtract = (a: Resources, b: Resources): Resources => combine(a, b, -1);

export const sum = (list: Iterable<Resources>): Resources => {
  let total: Resources = {};
  for (const r of list) total = add(total, r);
  return total;
};

/** The first dimension that `bound` sets on which `a` is larger (absent in `a` = 0), or null. */
export function exceeding(a: Resources, bound: Resources): Dimension | null {
  // Spelled out in DIMENSIONS order, as combine is: fitsWithin runs for every node and plan.
  if (bound.gpus !== undefined && (a.gpus ?? 0) > bound.gpus) return 'gpus';
  if (bound.cores !== undefined && (a.cores ?? 0) > bound.cores) return 'cores';
  if (bound.memory_gib !== undefined && (a.memory_gib ?? 0) > bound.memory_gib) return 'memory_gib';
  return null;
}

/** `a <= bound` on every dimension `bound` sets (POLICY.md "Words"). */
export const fitsWithin = (a: Resources, bound: Resources): boolean => exceeding(a, bound) === null;

/** r uses some dimension that `bound` sets: what makes a replica count against a guarantee. */
export const usesAnyOf = (r: Resources, bound: Resources): boolean =>
  DIMENSIONS.some((d) => bound[d] !== undefined && (r[d] ?? 0) > 0);

/** Nothing set, or zero on every dimension that is set. */
export const isEmpty = (r: Resources): boolean => DIMENSIONS.every((d) => !r[d]);

/** The dimensions r sets, in display order. */
export const dimensionsOf = (r: Resources): Dimension[] => DIMENSIONS.filter((d) => r[d] !== undefined);

/** r restricted to the dimensions `like` sets (absent in r = 0): holds shown next to a quota. */
export function onDimensionsOf(r: Resources, like: Resources): Resources {
  const out: Resources = {};
  for (const d of dimensionsOf(like)) out[d] = r[d] ?? 0;
  return out;
}

/**
 * Orders amounts the way a shortage is felt: GPUs first, then cores, then memory.
 * Negative when a is smaller.
 */
export function compareScarceFirst(a: Resources, b: Resources): number {
  for (const d of DIMENSIONS) {
    const diff = (a[d] ?? 0) - (b[d] ?? 0);
    if (diff !== 0) return diff;
  }
  return 0;
}

/** A bare number as the sentences print it: "4", "0.5" (three decimals at most). */
export const formatNumber = (n: number): string => String(Math.round(n * 1000) / 1000);

/** "1 GPU", "8 GPUs", "1 core", "0.5 cores", "512 GiB". */
export function formatAmount(d: Dimension, n: number): string {
  const value = formatNumber(n);
  if (d === 'memory_gib') return `${value} GiB`;
  const word = d === 'gpus' ? 'GPU' : 'core';
  return `${value} ${word}${n === 1 ? '' : 's'}`;
}

/** "8 GPUs, 64 cores, 512 GiB"; unset dimensions are left out; "nothing" when empty. */
export function formatResources(r: Resources): string {
  if (isEmpty(r)) return 'nothing';
  return dimensionsOf(r)
    .map((d) => formatAmount(d, r[d]!))
    .join(', ');
}
