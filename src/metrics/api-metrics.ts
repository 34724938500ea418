import { Gauge, Registry } from 'prom-client';
import type { PolicySettings } from '../domain/snapshot.ts';
import { sharedReading } from '../shared-reading.ts';
import type { Sql } from '../store/db.ts';
import { isStoreError } from '../store/db.ts';
import { latestDecisions } from '../store/decisions.ts';
import { lastHeartbeats } from '../store/node-liveness.ts';
import { readSnapshot } from '../store/snapshot.ts';
import { type Metrics, processMetrics } from './registry.ts';
import { stateFigures } from './state-figures.ts';
import type { StateFigures } from './state-gauge-definitions.ts';
import { stateGauges } from './state-gauges.ts';

/**
 * The state gauges' figures from one snapshot, the models' newest decisions and the agents' nodes'
 * last heartbeats, read now.
 */
export async function readStateFigures(
  sql: Sql,
  now: number,
  settings: PolicySettings,
): Promise<StateFigures> {
  const [snapshot, heartbeats] = await Promise.all([readSnapshot(sql, now, settings), lastHeartbeats(sql)]);
  const newest = await latestDecisions(
    sql,
    snapshot.models.map((model) => model.name),
  );
  const heartbeatAt = new Map([...heartbeats].map(([node, at]) => [node, Date.parse(at)]));
  return stateFigures(snapshot, newest, heartbeatAt);
}

/** How old the state figures may be by default: a scrape every 15 s still sees fresh ones. */
export const DEFAULT_METRICS_REFRESH_MS = 5000;

/**
 * What GET /metrics serves: the process's metrics (the worker's too in `llmgw dev`) and the state,
 * read from this API's store as GET /api/v1/quotas reads it. The state is read and written out at most
 * once per `metricsRefreshMs` for all scrapers, so that many scrapes cost one read of the store and
 * one serialisation of its thousands of samples. A store that fails counts as a store error once per
 * read and leaves out the state, not the rest.
 */
export function apiMetrics(
  deps: {
    sql: Sql;
    policy: PolicySettings;
    now?: () => number;
    metricsRefreshMs?: number;
    /** How many models have no running reconciler (the same reading /readyz reports). */
    missingReconcilers?: () => Promise<number>;
  },
  metrics: Metrics = processMetrics,
) {
  const now = deps.now ?? Date.now;
  let figures: StateFigures | null = null;
  const state = stateGauges(() => figures);
  const readState = sharedReading(async () => {
    try {
      figures = await readStateFigures(deps.sql, now(), deps.policy);
      return await state.metrics();
    } catch (error) {
      if (isStoreError(error)) metrics.storeErrors.inc({ op: 'metrics_scrape' });
      throw error;
    } finally {
      figures = null;
    }
  }, deps.metricsRefreshMs ?? DEFAULT_METRICS_REFRESH_MS);
  // Written out at each scrape: counters move between reads of the state.
  const live = Registry.merge([metrics.registry, reconcilerGauges(deps.missingReconcilers)]);
  metrics.storeErrors.inc({ op: 'metrics_scrape' }, 0);
  return {
    /** Every metric GET /metrics serves, for listing them. */
    registry: Registry.merge([live, state]),
    contentType: live.contentType,
    async scrape(): Promise<string> {
      // Read before writing out the rest, so that a failure shows in this scrape's store error count.
      const stateText = await readState().catch((error) => {
        if (!isStoreError(error)) throw error;
        return null;
      });
      const liveText = await live.metrics();
      return stateText === null ? liveText : `${liveText}\n${stateText}`;
    },
  };
}

/** llmgw_reconcilers_missing, absent when it cannot be read (Temporal down: /readyz says so). */
function reconcilerGauges(missing: (() => Promise<number>) | undefined): Registry {
  const registry = new Registry();
  new Gauge({
    name: 'llmgw_reconcilers_missing',
    help: 'Models in the store whose reconciler is not running (the worker starts them again at its next check).',
    registers: [registry],
    async collect() {
      this.reset();
      const count = await missing?.().catch(() => undefined);
      if (count !== undefined) this.set(count);
    },
  });
  return registry;
}
