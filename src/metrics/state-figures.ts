import type { Snapshot } from '../domain/snapshot.ts';
import { buildView } from '../policy/view.ts';
import type { StoredDecision } from '../store/decisions.ts';
import { clusterSeries } from './cluster-series.ts';
import { modelSeries } from './model-series.ts';
import { quotaSeries } from './quota-series.ts';
import type { StateFigures } from './state-gauge-definitions.ts';

/**
 * Every state gauge's samples from one snapshot and the models' newest decisions, with the policy's
 * own figures, so they agree with GET /api/v1/quotas and the decisions.
 */
export function stateFigures(snapshot: Snapshot, newest: ReadonlyMap<string, StoredDecision>): StateFigures {
  const view = buildView(snapshot);
  return { ...quotaSeries(view), ...modelSeries(view, newest), ...clusterSeries(view) };
}
