import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { PolicyAge } from './policy-age.ts';

/**
 * The instruments fed by events (the reconciler's passes, reclaims, store failures). The gauges of
 * the state (quotas, models, cluster) are read from the store at scrape time instead: state-gauges.ts.
 */
export function createMetrics(registry = new Registry()) {
  const registers = [registry];
  const policyAge = new PolicyAge();
  new Gauge({
    name: 'llmgw_quota_policy_age_seconds',
    help: 'How long this worker has decided with a quota policy it cannot re-read from the store; 0 while reads succeed.',
    registers,
    collect() {
      this.set(policyAge.seconds());
    },
  });
  return {
    registry,
    policyAge,
    decisions: new Counter({
      name: 'llmgw_reconcile_decisions_total',
      help: 'Decisions planned by reconciler passes, by model and action (place, reclaim, remove, none).',
      labelNames: ['model', 'action'] as const,
      registers,
    }),
    passSeconds: new Histogram({
      name: 'llmgw_reconcile_pass_seconds',
      help: 'Time to read the state and decide one reconciler pass.',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
    reclaims: new Counter({
      name: 'llmgw_reclaims_total',
      help: 'Borrowed replicas reclaimed, by the scope that owned them and the scope whose guarantee took the room.',
      labelNames: ['from_scope', 'for_scope'] as const,
      registers,
    }),
    preemptions: new Counter({
      name: 'llmgw_preemptions_total',
      help: 'Replicas preempted for a replica of a higher claim, by the scope that owned them and the tier they were in.',
      labelNames: ['from_scope', 'tier'] as const,
      registers,
    }),
    reconcilersRestarted: new Counter({
      name: 'llmgw_reconcilers_restarted_total',
      help: "Reconcilers the worker's periodic check found not running for a model that exists, and started again.",
      registers,
    }),
    storeErrors: new Counter({
      name: 'llmgw_store_errors_total',
      help: 'Store (Postgres) operations that failed, by operation.',
      labelNames: ['op'] as const,
      registers,
    }),
    authFailures: new Counter({
      name: 'llmgw_auth_failures_total',
      help: 'API requests refused for want of a valid bearer token, by reason (missing, malformed, unknown, expired).',
      labelNames: ['reason'] as const,
      registers,
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** The process's metrics: in `llmgw dev` the API and the worker share them, so /metrics shows both. */
export const processMetrics = createMetrics();
