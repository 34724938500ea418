import type { Snapshot } from '../domain/snapshot.ts';
import { buildView } from '../policy/view.ts';
import type { StoredDecision } from '../store/decisions.ts';
import { clusterSeries, nodeSeries } from './cluster-series.ts';
import { modelSeries } from './model-series.ts';
import { quotaSeries } from './quota-series.ts';
import type { StateFigures } from './state-gauge-definitions.ts';

/**
 * Every state gauge's samples from one snapshot, the models' newest decisions and the agents' nodes'
 * last heartbeats (ms since the epoch, by node name), with the policy's own figures, so they agree
 * with GET /api/v1/quotas, GET /api/v1/nodes and the decisions.
 */
export function stateFigures(
  snapshot: Snapshot,
  newest: ReadonlyMap<string, StoredDecision>,
  heartbeats: ReadonlyMap<string, number>,
): StateFigures {
  const view = buildView(snapshot);
  return {
    ...quotaSeries(view),
    ...modelSeries(view, newest),
    ...clusterSeries(view),
    ...nodeSeries(view, heartbeats),
  };
}
