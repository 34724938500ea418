import type { Replica } from './cluster.ts';

/**
 * Makes replicas real. Calls are idempotent per replica ID: a retried activity or a replayed workflow
 * never starts a second copy. Drivers report state changes back to the store and the reconcilers.
 */
export interface ClusterDriver {
  /** Runs a replica its node admitted (state starting, placement/admit-start.ts) on that node. */
  start(replica: Replica): Promise<void>;
  /** Stops a draining replica once its in-flight requests had their grace period. */
  drain(replica: Replica): Promise<void>;
}
