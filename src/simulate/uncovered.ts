import type { ModelSeries } from './run.ts';

/** A stretch of ticks at which requests of a model waited for a slot (docs/simulation.md, "covered"). */
export interface Uncovered {
  /** Its first tick's offset from the start of the run (ms). */
  fromMs: number;
  ms: number;
  /** The most in flight during it, and the ready slots at its first tick. */
  mostInFlight: number;
  slots: number;
}

/**
 * The stretches at which requests waited, in order: what "covered" leaves out, so that a miss can be
 * told apart (a first burst before the model showed one, a later one above the room kept).
 */
export function uncoveredStretches(series: ModelSeries, tickMs: number): Uncovered[] {
  const stretches: Uncovered[] = [];
  let open: Uncovered | null = null;
  for (let i = 0; i < series.waiting.length; i++) {
    if (series.waiting[i] === 0) {
      open = null;
      continue;
    }
    if (!open) {
      open = { fromMs: i * tickMs, ms: 0, mostInFlight: 0, slots: series.capacity[i] };
      stretches.push(open);
    }
    open.ms += tickMs;
    open.mostInFlight = Math.max(open.mostInFlight, series.load[i]);
  }
  return stretches;
}

/** The most stretches a line names: the longest, in time order; the rest are summed. */
export const NAMED_STRETCHES = 8;

/**
 * "code: 21 s uncovered: at 1:52 for 4 s (14 in flight on 8 ready slots), ...": the longest stretches
 * in time order, then "and N shorter (S s)" when there are more than NAMED_STRETCHES (a model starved
 * for an hour has dozens, and one line must stay readable).
 */
export function uncoveredLine(model: string, stretches: readonly Uncovered[]): string {
  if (stretches.length === 0) return `${model}: no second uncovered`;
  const seconds = (of: readonly Uncovered[]) => of.reduce((sum, s) => sum + s.ms, 0) / 1000;
  const named = new Set([...stretches].sort((a, b) => b.ms - a.ms).slice(0, NAMED_STRETCHES));
  const each = stretches
    .filter((s) => named.has(s))
    .map(
      (s) =>
        `at ${clock(s.fromMs)} for ${s.ms / 1000} s (${s.mostInFlight} in flight on ${s.slots} ready slots)`,
    );
  const rest = stretches.filter((s) => !named.has(s));
  const more = rest.length > 0 ? `, and ${rest.length} shorter (${seconds(rest)} s)` : '';
  return `${model}: ${seconds(stretches)} s uncovered: ${each.join(', ')}${more}`;
}

/** m:ss from the start of the run. */
export const clock = (ms: number) => {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
};
