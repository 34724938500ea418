import { createRoute, z } from '@hono/zod-openapi';
import { permits } from '../../../auth/guard.ts';
import {
  DecisionSchema,
  ModelPrioritySchema,
  ModelSummarySchema,
  OwnerInputSchema,
  PreemptedForSchema,
  ProfileSchema,
  WarningsSchema,
} from '../../../contracts/schemas/models.ts';
import { NameParam } from '../../../contracts/schemas/names.ts';
import { ResourcesSchema } from '../../../contracts/schemas/resources.ts';
import { jsonBody } from '../../http.ts';
import { errors, jsonContent, jsonRequest } from '../../openapi.ts';
import { tokensPerSec } from '../../throughput.ts';

// The models' routes as the OpenAPI document describes them: paths, who may call them, what they take
// and answer. What they do is in handlers.ts.

const MODEL_BODY_LIMIT = 256 * 1024;
const OWNER_BODY_LIMIT = 4 * 1024;

export const ModelInputSchema = z
  .strictObject({
    owner: OwnerInputSchema.optional().openapi({
      description: 'absent keeps the stored owner (none for a new model); "" or null clears it',
    }),
    priority: ModelPrioritySchema.optional().openapi({
      description:
        'among models competing for one limit or node, a higher priority keeps and takes room first; absent keeps the stored priority (0 for a new model)',
    }),
    min_replicas: z.number().int().min(0).max(10_000).default(0),
    max_replicas: z.number().int().min(1).max(10_000),
    target_tokens_per_sec: tokensPerSec().positive().nullable().optional().openapi({
      description: 'absent keeps the stored target throughput; null clears it',
    }),
    profiles: z.array(ProfileSchema).min(1, { error: 'needs at least one profile' }).max(32),
  })
  .openapi('ModelInput');

const PutAnswerSchema = z.object({ name: z.string(), warnings: WarningsSchema });

const ReplicaSchema = z.object({
  id: z.string(),
  profile: z.string(),
  node: z.string(),
  resources: ResourcesSchema,
  state: z.string(),
  created_at: z.string(),
  preempted_for: PreemptedForSchema,
});

export const ModelDetailSchema = ModelSummarySchema.extend({
  profiles: z.array(ProfileSchema),
  replicas_list: z.array(ReplicaSchema),
  decisions: z.array(DecisionSchema),
  warnings: WarningsSchema.openapi({
    description: 'what a reader should know of the model, e.g. a profile kept on an inline engine',
  }),
}).openapi('Model');

export const putModelRoute = createRoute({
  middleware: [permits('change-model'), jsonBody(MODEL_BODY_LIMIT)] as const,
  method: 'put',
  path: '/models/{name}',
  tags: ['models'],
  summary: 'Create or replace a model and start (or tell) its reconciler',
  request: { params: NameParam, body: jsonRequest(ModelInputSchema) },
  responses: {
    200: jsonContent(PutAnswerSchema, 'updated'),
    201: jsonContent(PutAnswerSchema, 'created'),
    ...errors(400, 409, 413, 503),
  },
});

export const deleteModelRoute = createRoute({
  middleware: [permits('change-model')] as const,
  method: 'delete',
  path: '/models/{name}',
  tags: ['models'],
  summary: 'Delete a model: its replicas are drained and stopped, then its reconciler ends',
  request: { params: NameParam },
  responses: { 200: jsonContent(z.object({ deleting: z.string() })), ...errors(404, 503) },
});

export const listModelsRoute = createRoute({
  middleware: [permits('read')] as const,
  method: 'get',
  path: '/models',
  tags: ['models'],
  summary: 'List models with their replicas, load, capacity at SLO and newest decision',
  responses: { 200: jsonContent(z.array(ModelSummarySchema)), ...errors(503) },
});

export const getModelRoute = createRoute({
  middleware: [permits('read')] as const,
  method: 'get',
  path: '/models/{name}',
  tags: ['models'],
  summary: 'One model with its profiles, replicas and newest decisions',
  request: { params: NameParam },
  responses: { 200: jsonContent(ModelDetailSchema), ...errors(404, 503) },
});

export const setOwnerRoute = createRoute({
  middleware: [permits('change-model'), jsonBody(OWNER_BODY_LIMIT)] as const,
  method: 'post',
  path: '/models/{name}/owner',
  tags: ['models'],
  summary: 'Set or clear ("", null or no owner field) the owner of a model',
  request: {
    params: NameParam,
    body: jsonRequest(z.strictObject({ owner: OwnerInputSchema.optional() })),
  },
  responses: {
    200: jsonContent(
      z.object({
        model: z.string(),
        owner: z.string().openapi({ description: 'the owner scope key; "" when cleared' }),
        warnings: WarningsSchema,
      }),
    ),
    ...errors(400, 404, 413, 503),
  },
});
