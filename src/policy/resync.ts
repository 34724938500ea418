import type { Decision } from '../domain/decision.ts';
import { RESYNC_SPREAD } from '../domain/resync.ts';
import type { View } from './view.ts';

/**
 * How many resync periods a model at rest waits before looking again untold. At rest: no replica, none
 * wanted (min_replicas 0, nothing in flight) and nothing it waits for. Whatever could move it (load,
 * its spec or owner, a quota) tells its reconciler; the resync is only the net under a lost signal.
 */
export const AT_REST_RESYNCS = 4;

/**
 * How long the model's reconciler waits after this decision for a pass that nothing asked for: no longer
 * than until the end of a profile's start backoff (`backedOffUntil`, ms since the epoch), since nothing
 * tells it when a backoff ends, and a crashed replica is to be replaced then, not at the next resync.
 */
export function resyncAfter(
  view: View,
  decision: Decision,
  resyncMs: number,
  backedOffUntil: Readonly<Record<string, number>> = {},
): number {
  const usual = usualResync(view, decision, resyncMs);
  const ends = Object.values(backedOffUntil).filter((until) => until > view.now);
  if (ends.length === 0) return usual;
  // Stretched by the spread, so that the wait, spread, ends at the backoff's end or just after, not before.
  const toEnd = Math.ceil((Math.min(...ends) - view.now) / (1 - RESYNC_SPREAD));
  return Math.min(usual, toEnd);
}

function usualResync(view: View, decision: Decision, resyncMs: number): number {
  const atRest =
    decision.action === 'none' &&
    !decision.pending &&
    decision.inputs.min_replicas === 0 &&
    !decision.inputs.in_flight &&
    view.replicasOfModel(decision.model).length === 0;
  return atRest ? resyncMs * AT_REST_RESYNCS : resyncMs;
}
