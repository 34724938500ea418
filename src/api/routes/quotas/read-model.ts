import { displayName } from '../../../domain/scope-names.ts';
import type { Snapshot } from '../../../domain/snapshot.ts';
import { complete } from '../../../policy/resources.ts';
import { scopeFigures } from '../../../policy/scope-figures.ts';
import type { StoredQuota } from '../../../store/quotas.ts';

/**
 * Shows stored quotas as GET answers them, with what their scopes hold and borrow in `snapshot`.
 * Guarantee and limit are always there, `{}` when unset, as the original had them: clients read
 * `q.limit.gpus` without a check. Preemption and priority are always there too, "lower-claim" and 0
 * when unset.
 */
export function quotaViews(snapshot: Snapshot) {
  const scopes = new Map(snapshot.scopes.map((scope) => [scope.key, scope]));
  const perScope = scopeFigures(snapshot);
  return (quota: StoredQuota) => ({
    scope: quota.scope,
    name: displayName(scopes, quota.scope),
    guarantee: quota.guarantee ?? {},
    limit: quota.limit ?? {},
    preemption: quota.preemption ?? 'lower-claim',
    priority: quota.priority ?? 0,
    holds: complete(perScope.get(quota.scope)?.holds ?? {}),
    borrowed: complete(perScope.get(quota.scope)?.borrowed ?? {}),
    updated_by: quota.updated_by,
    updated_at: quota.updated_at,
  });
}
