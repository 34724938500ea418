import { Gauge } from 'prom-client';
import type { ActivityDeps } from '../activities/index.ts';
import type { PolicyCacheEvents } from '../activities/policy-cache.ts';
import { isStoreError } from '../store/db.ts';
import { type Metrics, processMetrics } from './registry.ts';

type Activity = (...args: never[]) => Promise<unknown>;

/** How the worker feeds the metrics: hooks for the activities, the policy cache and the reconciler check, and store failures. */
export function workerMetrics(metrics: Metrics = processMetrics) {
  const activityHooks: Required<Pick<ActivityDeps, 'onDecision' | 'onVictims'>> = {
    onDecision: (decision, passSeconds) => {
      metrics.decisions.inc({ model: decision.model, action: decision.action });
      metrics.passSeconds.observe(passSeconds);
    },
    onVictims: (decision) => {
      for (const victim of decision.victims ?? []) {
        if (decision.action === 'preempt') {
          metrics.preemptions.inc({
            from_scope: victim.owner ?? 'none',
            tier: victim.claim?.tier ?? 'unknown',
          });
        } else {
          metrics.reclaims.inc({
            from_scope: victim.owner ?? 'none',
            for_scope: decision.reclaim_for ?? 'none',
          });
        }
      }
    },
  };
  const policyCacheEvents: Required<PolicyCacheEvents> = {
    onRead: () => metrics.policyAge.read(),
    onStale: (_error, ageMs) => {
      metrics.storeErrors.inc({ op: 'policy_read' });
      metrics.policyAge.stale(ageMs);
    },
  };
  metrics.storeErrors.inc({ op: 'policy_read' }, 0);
  const onReconcilersRestarted = (models: string[]) => metrics.reconcilersRestarted.inc(models.length);
  const simClusterLeader = leaderGauge(metrics);
  const onSimClusterLeader = (leads: boolean) => simClusterLeader.set(leads ? 1 : 0);

  /** The activities as they are, counting each store failure by the activity's name (op) before Temporal retries. */
  function countStoreErrors<T extends Record<string, Activity>>(activities: T): T {
    const counted = Object.entries(activities).map(([op, activity]) => {
      // From 0, so that the first failure already shows in rate().
      metrics.storeErrors.inc({ op }, 0);
      const wrapped = async (...args: never[]) => {
        try {
          return await activity(...args);
        } catch (error) {
          if (isStoreError(error)) metrics.storeErrors.inc({ op });
          throw error;
        }
      };
      return [op, wrapped];
    });
    return Object.fromEntries(counted) as T;
  }

  return { activityHooks, policyCacheEvents, countStoreErrors, onReconcilersRestarted, onSimClusterLeader };
}

const LEADER = 'llmgw_sim_cluster_leader';

/** Registered by a worker only (a process without one runs no sim), once however many workers it starts. */
function leaderGauge(metrics: Metrics): Gauge {
  return (
    (metrics.registry.getSingleMetric(LEADER) as Gauge | undefined) ??
    new Gauge({
      name: LEADER,
      help: "1 while this worker holds the sim-cluster lease and runs the simulated cluster's ticks and engines, else 0.",
      registers: [metrics.registry],
    })
  );
}
