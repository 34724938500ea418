import type { Decision } from '../domain/decision.ts';
import type { View } from './view.ts';

/**
 * How many resync periods a model at rest waits before looking again untold. At rest: no replica, none
 * wanted (min_replicas 0, nothing in flight) and nothing it waits for. Whatever could move it (load,
 * its spec or owner, a quota) tells its reconciler; the resync is only the net under a lost signal.
 */
export const AT_REST_RESYNCS = 4;

/** How long the model's reconciler waits after this decision for a pass that nothing asked for. */
export function resyncAfter(view: View, decision: Decision, resyncMs: number): number {
  const atRest =
    decision.action === 'none' &&
    !decision.pending &&
    decision.inputs.min_replicas === 0 &&
    !decision.inputs.in_flight &&
    view.replicasOfModel(decision.model).length === 0;
  return atRest ? resyncMs * AT_REST_RESYNCS : resyncMs;
}
