import { DIMENSIONS, type Dimension } from '../domain/resources.ts';
import { dimensionsOf } from '../policy/resources.ts';
import { scopeFigures } from '../policy/scope-figures.ts';
import type { View } from '../policy/view.ts';
import type { Sample, StateFigures } from './state-gauge-definitions.ts';

type QuotaGauges =
  | 'llmgw_quota_guarantee'
  | 'llmgw_quota_limit'
  | 'llmgw_quota_holds'
  | 'llmgw_quota_borrowed';

/**
 * The figures GET /api/v1/quotas lists, for the scopes with a quota: guarantee and limit on the
 * dimensions they set, holds and borrowed on all (zero when nothing).
 */
export function quotaSeries(view: View): Pick<StateFigures, QuotaGauges> {
  const perScope = scopeFigures(view);
  const series: Pick<StateFigures, QuotaGauges> = {
    llmgw_quota_guarantee: [],
    llmgw_quota_limit: [],
    llmgw_quota_holds: [],
    llmgw_quota_borrowed: [],
  };
  for (const quota of view.quotas.values()) {
    const name = view.displayName(quota.scope);
    const sample = (resource: Dimension, value: number | undefined): Sample => ({
      labels: { scope: quota.scope, name, resource },
      value: value ?? 0,
    });
    const { guarantee = {}, limit = {} } = quota;
    const figures = perScope.get(quota.scope);
    for (const d of dimensionsOf(guarantee)) series.llmgw_quota_guarantee.push(sample(d, guarantee[d]));
    for (const d of dimensionsOf(limit)) series.llmgw_quota_limit.push(sample(d, limit[d]));
    for (const d of DIMENSIONS) {
      series.llmgw_quota_holds.push(sample(d, figures?.holds[d]));
      series.llmgw_quota_borrowed.push(sample(d, figures?.borrowed[d]));
    }
  }
  return series;
}
