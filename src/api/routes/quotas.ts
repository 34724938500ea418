import { createRoute, z } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { NotFound } from '../../domain/errors.ts';
import type { Quota } from '../../domain/quota.ts';
import { ResourcesSchema } from '../../domain/resources.ts';
import { displayName } from '../../domain/scope-names.ts';
import type { Snapshot } from '../../domain/snapshot.ts';
import { grantWarnings, overrunBudget, overrunSentence } from '../../policy/guarantee-grants.ts';
import { previewQuota } from '../../policy/preview.ts';
import { guaranteeAboveLimit } from '../../policy/quota-rules.ts';
import { complete, dimensionsOf, formatAmount } from '../../policy/resources.ts';
import { scopeFigures } from '../../policy/scope-figures.ts';
import { buildView, type View } from '../../policy/view.ts';
import { lockUntilCommit } from '../../store/locks.ts';
import { modelsOwnedBy } from '../../store/models.ts';
import { deleteQuota, getQuota, listQuotas, putQuota, type StoredQuota } from '../../store/quotas.ts';
import { readQuotaPolicy, readSnapshot } from '../../store/snapshot.ts';
import { listScopes } from '../../store/tenancy.ts';
import { authorize, identityOf, permits, visibility } from '../auth/guard.ts';
import { mayOverrun } from '../auth/permissions.ts';
import type { ApiDeps } from '../deps.ts';
import { ApiError, jsonBody } from '../http.ts';
import { errors, jsonContent, jsonRequest, newRouter } from '../openapi.ts';
import { recorded } from '../recorded.ts';
import { resolveOrRefuse, subtree } from '../scopes.ts';

const BODY_LIMIT = 16 * 1024;
/** Quota grants look at scopes and quotas only. */
const NO_LIVE_STATE = { models: [], nodes: [], replicas: [], load: {} };

const QuotaInputSchema = z
  .strictObject({
    // May be absent or empty, so that a missing scope gets the resolution's sentence, as in the original.
    scope: z.string().max(300).default('').openapi({
      example: 'team:Acme/ml',
      description: 'the scope whose quota this is, written as API.md "Conventions" says',
    }),
    guarantee: ResourcesSchema.optional(),
    limit: ResourcesSchema.optional(),
  })
  .openapi('QuotaInput');

const FiguresSchema = z.object({ gpus: z.number(), cores: z.number(), memory_gib: z.number() });
const QuotaViewSchema = z
  .object({
    scope: z.string(),
    name: z.string(),
    guarantee: ResourcesSchema.describe('{} when the quota sets none'),
    limit: ResourcesSchema.describe('{} when the quota sets none'),
    holds: FiguresSchema,
    borrowed: FiguresSchema,
    updated_by: z.string(),
    updated_at: z.string(),
  })
  .openapi('Quota');

const PreviewSchema = z
  .object({
    scope: z.string(),
    became_borrowed: z.array(z.string()),
    became_protected: z.array(z.string()),
    reclaimable: z.array(z.object({ replica: z.string(), model: z.string(), resources: ResourcesSchema })),
    blocked_models: z.array(z.object({ model: z.string(), why: z.string() })),
    warnings: z
      .array(z.string())
      .describe('Why the guarantee cannot be honoured as written (nesting caps it).'),
  })
  .openapi('QuotaPreview');

const QuotaSetSchema = z
  .object({
    scope: z.string(),
    warnings: z
      .array(z.string())
      .optional()
      .describe(
        'Present when the guarantee is accepted but cannot be honoured as written (nesting caps it).',
      ),
  })
  .openapi('QuotaSet');

/**
 * Shows stored quotas as GET answers them, with what their scopes hold and borrow in `snapshot`.
 * Guarantee and limit are always there, `{}` when unset, as the original had them: clients read
 * `q.limit.gpus` without a check.
 */
function quotaViews(snapshot: Snapshot) {
  const scopes = new Map(snapshot.scopes.map((scope) => [scope.key, scope]));
  const perScope = scopeFigures(snapshot);
  return (quota: StoredQuota) => ({
    scope: quota.scope,
    name: displayName(scopes, quota.scope),
    guarantee: quota.guarantee ?? {},
    limit: quota.limit ?? {},
    holds: complete(perScope.get(quota.scope)?.holds ?? {}),
    borrowed: complete(perScope.get(quota.scope)?.borrowed ?? {}),
    updated_by: quota.updated_by,
    updated_at: quota.updated_at,
  });
}

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
  if (!guarantee && !limit)
    throw new ApiError(400, 'a quota needs a guarantee or a limit; to remove one, DELETE it');
  const above = guaranteeAboveLimit(guarantee, limit);
  if (above) {
    throw new ApiError(
      400,
      `the guarantee of ${formatAmount(above, guarantee![above]!)} is above the limit of ${formatAmount(above, limit![above]!)}`,
    );
  }
  return { scope: scope.key, ...(guarantee ? { guarantee } : {}), ...(limit ? { limit } : {}) };
}

export function quotasRouter(deps: ApiDeps) {
  const app = newRouter();
  const { sql } = deps;
  const now = deps.now ?? Date.now;

  /** A quota change reaches the models owned anywhere beneath the scope. */
  const tellSubtree = async (scope: Parameters<typeof subtree>[1]) => {
    const owners = [...subtree(await listScopes(sql), scope)];
    await deps.reconcilers.tell(await modelsOwnedBy(sql, owners), 'quotaChanged');
  };

  app.openapi(
    createRoute({
      middleware: [permits('read')] as const,
      method: 'get',
      path: '/quotas',
      tags: ['quotas'],
      summary: 'List quotas with what each scope holds and borrows',
      responses: { 200: jsonContent(z.array(QuotaViewSchema)), ...errors(503) },
    }),
    async (c) => {
      const [snapshot, stored, shown] = await Promise.all([
        readSnapshot(sql, now(), deps.policy),
        listQuotas(sql),
        visibility(c),
      ]);
      return c.json(stored.filter((quota) => shown(quota.scope)).map(quotaViews(snapshot)), 200);
    },
  );

  app.openapi(
    createRoute({
      middleware: [permits('read')] as const,
      method: 'get',
      path: '/quotas/{scope}',
      tags: ['quotas'],
      summary: "One scope's quota, as the list shows it",
      request: { params: z.object({ scope: z.string() }) },
      responses: { 200: jsonContent(QuotaViewSchema), ...errors(400, 404, 503) },
    }),
    async (c) => {
      const scope = await resolveOrRefuse(c, c.req.valid('param').scope);
      const [quota, shown, { label }] = await Promise.all([
        getQuota(sql, scope.key),
        visibility(c),
        c.get('scopeTree')(),
      ]);
      // A quota the list would not show (one above the caller's scope) is not shown here either.
      if (!quota || !shown(scope.key)) throw new NotFound(`${label(scope.key)} has no quota`);
      return c.json(quotaViews(await readSnapshot(sql, now(), deps.policy))(quota), 200);
    },
  );

  app.openapi(
    createRoute({
      middleware: [permits('change-quota'), jsonBody(BODY_LIMIT)] as const,
      method: 'put',
      path: '/quotas',
      tags: ['quotas'],
      summary: "Set a scope's whole quota (guarantee and/or limit)",
      request: { body: jsonRequest(QuotaInputSchema) },
      responses: { 200: jsonContent(QuotaSetSchema), ...errors(400, 403, 413, 503) },
    }),
    async (c) => {
      const quota = await checkedQuota(c, c.req.valid('json'));
      await authorize(c, 'change-quota', { scope: quota.scope });
      const warnings = await recorded(
        c,
        sql,
        'quota.set',
        quota.scope,
        (tx) => getQuota(tx, quota.scope),
        async (tx) => {
          // Checked on the quotas read under the lock: two grants at once cannot both take what is left.
          await lockUntilCommit(tx, 'quotaChanges');
          const policy = await readQuotaPolicy(tx);
          const view = buildView({ now: now(), settings: deps.policy, ...policy, ...NO_LIVE_STATE });
          const warned = await grantChecked(c, view, quota);
          await putQuota(tx, quota, identityOf(c).name);
          return warned;
        },
      );
      await tellSubtree(quota.scope);
      return c.json({ scope: quota.scope, ...(warnings.length > 0 ? { warnings } : {}) }, 200);
    },
  );

  app.openapi(
    createRoute({
      middleware: [permits('change-quota'), jsonBody(BODY_LIMIT)] as const,
      method: 'post',
      path: '/quotas/preview',
      tags: ['quotas'],
      summary: 'What setting this quota would change (changes nothing)',
      request: { body: jsonRequest(QuotaInputSchema) },
      responses: { 200: jsonContent(PreviewSchema), ...errors(400, 403, 413, 503) },
    }),
    async (c) => {
      const quota = await checkedQuota(c, c.req.valid('json'));
      await authorize(c, 'change-quota', { scope: quota.scope });
      const view = buildView(await readSnapshot(sql, now(), deps.policy));
      const warnings = await grantChecked(c, view, quota);
      return c.json({ scope: quota.scope, ...previewQuota(view, quota), warnings }, 200);
    },
  );

  app.openapi(
    createRoute({
      middleware: [permits('change-quota')] as const,
      method: 'delete',
      path: '/quotas/{scope}',
      tags: ['quotas'],
      summary: "Remove a scope's quota (none to remove is fine: the scope is left without one)",
      request: { params: z.object({ scope: z.string() }) },
      responses: { 200: jsonContent(z.object({ removed: z.string() })), ...errors(400, 503) },
    }),
    async (c) => {
      const scope = await resolveOrRefuse(c, c.req.valid('param').scope);
      await authorize(c, 'change-quota', { scope: scope.key });
      // Idempotent, as in the original; with nothing to remove, nothing changes and nothing is recorded.
      if (!(await getQuota(sql, scope.key))) return c.json({ removed: scope.key }, 200);
      await recorded(
        c,
        sql,
        'quota.remove',
        scope.key,
        (tx) => getQuota(tx, scope.key),
        (tx) => deleteQuota(tx, scope.key),
      );
      await tellSubtree(scope.key);
      return c.json({ removed: scope.key }, 200);
    },
  );
  return app;
}
