/**
 * How far a reconciler lets a resync fall from the wait asked (src/workflows/reconcile-model.ts), either
 * way: reconcilers started together do not stay together. The policy knows it too (policy/resync.ts),
 * so that a wait meant to end after a backoff does not end before it.
 */
export const RESYNC_SPREAD = 0.1;
