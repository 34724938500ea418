import { Registry } from 'prom-client';
import type { PolicySettings } from '../domain/snapshot.ts';
import type { Sql } from '../store/db.ts';
import { latestDecisions } from '../store/decisions.ts';
import { readSnapshot } from '../store/snapshot.ts';
import { type Metrics, processMetrics } from './registry.ts';
import { type StateFigures, stateFigures } from './state-figures.ts';
import { stateGauges } from './state-gauges.ts';
import { isStoreError } from './store-error.ts';

/** The state gauges' figures from one snapshot and the models' newest decisions, read now. */
export async function readStateFigures(
  sql: Sql,
  now: number,
  settings: PolicySettings,
): Promise<StateFigures> {
  const snapshot = await readSnapshot(sql, now, settings);
  const newest = await latestDecisions(
    sql,
    snapshot.models.map((model) => model.name),
  );
  return stateFigures(snapshot, newest);
}

/**
 * What GET /metrics serves: the process's metrics (the worker's too in `llmgw dev`) and the state,
 * read from this API's store at each scrape, as GET /api/v1/quotas reads it. A store that fails
 * counts as a store error in the same scrape and leaves out the state, not the rest.
 */
export function apiMetrics(
  deps: { sql: Sql; policy: PolicySettings; now?: () => number },
  metrics: Metrics = processMetrics,
) {
  const now = deps.now ?? Date.now;
  let figures: StateFigures | null = null;
  const registry = Registry.merge([metrics.registry, stateGauges(() => figures)]);
  metrics.storeErrors.inc({ op: 'metrics_scrape' }, 0);
  return {
    registry,
    contentType: registry.contentType,
    async scrape(): Promise<string> {
      // Read before serialising, so that a failure shows in this scrape's store error count.
      figures = await readStateFigures(deps.sql, now(), deps.policy).catch((error) => {
        if (!isStoreError(error)) throw error;
        metrics.storeErrors.inc({ op: 'metrics_scrape' });
        return null;
      });
      return registry.metrics();
    },
  };
}
