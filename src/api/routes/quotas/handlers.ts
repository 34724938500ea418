import type { RouteHandler, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { authorize, identityOf, visibility } from '../../../auth/guard.ts';
import { ApiError } from '../../../contracts/errors.ts';
import { mayOverrun } from '../../../contracts/permissions.ts';
import { NotFound } from '../../../domain/errors.ts';
import type { Quota } from '../../../domain/quota.ts';
import type { ScopeKey } from '../../../domain/scope.ts';
import { grantWarnings, overrunBudget, overrunSentence } from '../../../policy/guarantee-grants.ts';
import { previewQuota } from '../../../policy/preview.ts';
import { guaranteeAboveLimit } from '../../../policy/quota-rules.ts';
import { dimensionsOf, formatAmount } from '../../../policy/resources.ts';
import { buildView, type View } from '../../../policy/view.ts';
import type { Db } from '../../../store/db.ts';
import { lockUntilCommit } from '../../../store/locks.ts';
import { modelsOwnedBy } from '../../../store/models.ts';
import { deleteQuota, getQuota, listQuotas, putQuota } from '../../../store/quotas.ts';
import { readQuotaPolicy, readSnapshot } from '../../../store/snapshot.ts';
import { listScopes } from '../../../store/tenancy.ts';
import type { ApiDeps } from '../../deps.ts';
import { recordedChange } from '../../recorded.ts';
import { resolveOrRefuse, subtree } from '../../scopes.ts';
import { quotaViews } from './read-model.ts';
import type {
  getQuotaRoute,
  listQuotasRoute,
  previewQuotaRoute,
  QuotaInputSchema,
  removeQuotaRoute,
  setQuotaRoute,
} from './routes.ts';

/** Quota grants look at scopes and quotas only. */
const NO_LIVE_STATE = { models: [], nodes: [], replicas: [], load: {} };

/** What each route of quotas does, over the store and reconcilers of `deps`. */
export function quotaHandlers(deps: ApiDeps) {
  const { sql } = deps;
  const now = deps.now ?? Date.now;

  /** A quota change reaches the models owned anywhere beneath the scope. */
  const tellSubtree = (scope: ScopeKey) => ({
    models: async () => modelsOwnedBy(sql, [...subtree(await listScopes(sql), scope)]),
    why: 'quotaChanged' as const,
  });

  const list: RouteHandler<typeof listQuotasRoute> = async (c) => {
    const [snapshot, stored, shown] = await Promise.all([
      readSnapshot(sql, now(), deps.policy),
      listQuotas(sql),
      visibility(c),
    ]);
    return c.json(stored.filter((quota) => shown(quota.scope)).map(quotaViews(snapshot)), 200);
  };

  const get: RouteHandler<typeof getQuotaRoute> = async (c) => {
    const scope = await resolveOrRefuse(c, c.req.valid('param').scope);
    const [quota, shown, { label }] = await Promise.all([
      getQuota(sql, scope.key),
      visibility(c),
      c.get('scopeTree')(),
    ]);
    // A quota the list would not show (one above the caller's scope) is not shown here either.
    if (!quota || !shown(scope.key)) throw new NotFound(`${label(scope.key)} has no quota`);
    return c.json(quotaViews(await readSnapshot(sql, now(), deps.policy))(quota), 200);
  };

  const set: RouteHandler<typeof setQuotaRoute> = async (c) => {
    const quota = await checkedQuota(c, c.req.valid('json'));
    await authorize(c, 'change-quota', { scope: quota.scope });
    const warnings = await recordedChange(c, deps, {
      action: 'quota.set',
      ...quotaChange(quota.scope),
      apply: async (tx) => {
        // Checked on the quotas read under the lock: two grants at once cannot both take what is left.
        await lockUntilCommit(tx, 'quotaChanges');
        const policy = await readQuotaPolicy(tx);
        const view = buildView({ now: now(), settings: deps.policy, ...policy, ...NO_LIVE_STATE });
        const warned = await grantChecked(c, view, quota);
        await putQuota(tx, quota, identityOf(c).name);
        return warned;
      },
      tell: tellSubtree(quota.scope),
    });
    return c.json({ scope: quota.scope, ...(warnings.length > 0 ? { warnings } : {}) }, 200);
  };

  const preview: RouteHandler<typeof previewQuotaRoute> = async (c) => {
    const quota = await checkedQuota(c, c.req.valid('json'));
    await authorize(c, 'change-quota', { scope: quota.scope });
    const view = buildView(await readSnapshot(sql, now(), deps.policy));
    const warnings = await grantChecked(c, view, quota);
    return c.json({ scope: quota.scope, ...previewQuota(view, quota), warnings }, 200);
  };

  const remove: RouteHandler<typeof removeQuotaRoute> = async (c) => {
    const scope = await resolveOrRefuse(c, c.req.valid('param').scope);
    await authorize(c, 'change-quota', { scope: scope.key });
    // Idempotent, as in the original; with nothing to remove, nothing changes and nothing is recorded.
    if (!(await getQuota(sql, scope.key))) return c.json({ removed: scope.key }, 200);
    await recordedChange(c, deps, {
      action: 'quota.remove',
      ...quotaChange(scope.key),
      apply: (tx) => deleteQuota(tx, scope.key),
      tell: tellSubtree(scope.key),
    });
    return c.json({ removed: scope.key }, 200);
  };

  return { list, get, set, preview, remove };
}

/** A scope's quota as the audit log names and keeps it. */
const quotaChange = (scope: ScopeKey) => ({ target: scope, read: (tx: Db) => getQuota(tx, scope) });

/**
 * Refuses (403) a guarantee that overruns what the scope above has to grant, unless the caller's role
 * may (an admin); otherwise the warnings such a guarantee deserves (POLICY.md "Guarantees nest").
 */
async function grantChecked(c: Context, view: View, quota: Quota): Promise<string[]> {
  const { label } = await c.get('scopeTree')();
  const budget = overrunBudget(view, quota);
  const verdict = mayOverrun(identityOf(c), budget && overrunSentence(quota, budget, label), label);
  if (!verdict.allowed) throw new ApiError(403, verdict.why);
  return grantWarnings(view, quota, label);
}

/**
 * Resolves a quota body's scope and checks the body beyond its shape (API.md); answers 400 otherwise.
 * The scope comes first, as in the original: an empty quota for a scope that does not exist is told so.
 */
async function checkedQuota(c: Context, input: z.infer<typeof QuotaInputSchema>) {
  const scope = await resolveOrRefuse(c, input.scope);
  // A dimension given as 0 is set (a limit of 0 GPUs keeps a scope off GPUs); only absent ones are not.
  const guarantee = input.guarantee && dimensionsOf(input.guarantee).length > 0 ? input.guarantee : undefined;
  const limit = input.limit && dimensionsOf(input.limit).length > 0 ? input.limit : undefined;
  // A quota that only turns preemption off or sets a priority says something; one that says nothing is
  // refused, as in the original.
  const priority = input.priority ? input.priority : undefined;
  if (!guarantee && !limit && input.preemption !== 'never' && priority === undefined)
    throw new ApiError(400, 'a quota needs a guarantee or a limit; to remove one, DELETE it');
  const above = guaranteeAboveLimit(guarantee, limit);
  if (above) {
    throw new ApiError(
      400,
      `the guarantee of ${formatAmount(above, guarantee![above]!)} is above the limit of ${formatAmount(above, limit![above]!)}`,
    );
  }
  return {
    scope: scope.key,
    ...(guarantee ? { guarantee } : {}),
    ...(limit ? { limit } : {}),
    ...(input.preemption ? { preemption: input.preemption } : {}),
    ...(priority !== undefined ? { priority } : {}),
  };
}
