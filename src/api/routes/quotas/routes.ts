import { createRoute, z } from '@hono/zod-openapi';
import { permits } from '../../../auth/guard.ts';
import { FiguresSchema } from '../../../contracts/schemas/figures.ts';
import { ModelPrioritySchema } from '../../../contracts/schemas/models.ts';
import { QuotaPreviewSchema } from '../../../contracts/schemas/quotas.ts';
import { ResourcesSchema } from '../../../contracts/schemas/resources.ts';
import { PREEMPTION_SETTINGS } from '../../../domain/quota.ts';
import { jsonBody } from '../../http.ts';
import { errors, jsonContent, jsonRequest } from '../../openapi.ts';

// The quotas' routes as the OpenAPI document describes them; what they do is in handlers.ts.

const BODY_LIMIT = 16 * 1024;

const PreemptionSchema = z.enum(PREEMPTION_SETTINGS, { error: 'must be "never" or "lower-claim"' }).openapi({
  description:
    'whether models under the scope may preempt replicas of a strictly lower claim when a limit or missing room blocks them ("lower-claim") or wait ("never")',
});

export const QuotaInputSchema = z
  .strictObject({
    // May be absent or empty, so that a missing scope gets the resolution's sentence, as in the original.
    scope: z.string().max(300).default('').openapi({
      example: 'team:Acme/ml',
      description: 'the scope whose quota this is, written as API.md "Conventions" says',
    }),
    guarantee: ResourcesSchema.optional(),
    limit: ResourcesSchema.optional(),
    preemption: PreemptionSchema.optional().openapi({
      description: 'absent is "lower-claim": the whole quota is replaced, this too',
    }),
    priority: ModelPrioritySchema.optional().openapi({
      description:
        "the scope's priority among its siblings (higher keeps its replicas first against theirs); absent is 0: the whole quota is replaced, this too",
    }),
  })
  .openapi('QuotaInput');

const QuotaViewSchema = z
  .object({
    scope: z.string(),
    name: z.string(),
    guarantee: ResourcesSchema.describe('{} when the quota sets none'),
    limit: ResourcesSchema.describe('{} when the quota sets none'),
    preemption: PreemptionSchema,
    priority: z
      .number()
      .int()
      .openapi({ description: "the scope's priority among its siblings (0 unless set)" }),
    holds: FiguresSchema,
    borrowed: FiguresSchema,
    updated_by: z.string(),
    updated_at: z.string(),
  })
  .openapi('Quota');

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

const ScopeParam = z.object({ scope: z.string() });

export const listQuotasRoute = createRoute({
  middleware: [permits('read')] as const,
  method: 'get',
  path: '/quotas',
  tags: ['quotas'],
  summary: 'List quotas with what each scope holds and borrows',
  responses: { 200: jsonContent(z.array(QuotaViewSchema)), ...errors(503) },
});

export const getQuotaRoute = createRoute({
  middleware: [permits('read')] as const,
  method: 'get',
  path: '/quotas/{scope}',
  tags: ['quotas'],
  summary: "One scope's quota, as the list shows it",
  request: { params: ScopeParam },
  responses: { 200: jsonContent(QuotaViewSchema), ...errors(400, 404, 503) },
});

export const setQuotaRoute = createRoute({
  middleware: [permits('change-quota'), jsonBody(BODY_LIMIT)] as const,
  method: 'put',
  path: '/quotas',
  tags: ['quotas'],
  summary: "Set a scope's whole quota (guarantee and/or limit)",
  request: { body: jsonRequest(QuotaInputSchema) },
  responses: { 200: jsonContent(QuotaSetSchema), ...errors(400, 403, 413, 503) },
});

export const previewQuotaRoute = createRoute({
  middleware: [permits('change-quota'), jsonBody(BODY_LIMIT)] as const,
  method: 'post',
  path: '/quotas/preview',
  tags: ['quotas'],
  summary: 'What setting this quota would change (changes nothing)',
  request: { body: jsonRequest(QuotaInputSchema) },
  responses: { 200: jsonContent(QuotaPreviewSchema), ...errors(400, 403, 413, 503) },
});

export const removeQuotaRoute = createRoute({
  middleware: [permits('change-quota')] as const,
  method: 'delete',
  path: '/quotas/{scope}',
  tags: ['quotas'],
  summary: "Remove a scope's quota (none to remove is fine: the scope is left without one)",
  request: { params: ScopeParam },
  responses: { 200: jsonContent(z.object({ removed: z.string() })), ...errors(400, 503) },
});
