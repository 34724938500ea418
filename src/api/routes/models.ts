import { createRoute, z } from '@hono/zod-openapi';
import { ACTIVE_STATES } from '../../domain/cluster.ts';
import type { Model } from '../../domain/model.ts';
import { ResourcesSchema } from '../../domain/resources.ts';
import { loadOf } from '../../policy/load.ts';
import { modelFigures } from '../../policy/model-figures.ts';
import { isEmpty } from '../../policy/resources.ts';
import { buildView } from '../../policy/view.ts';
import { latestDecisions, listDecisions, type StoredDecision } from '../../store/decisions.ts';
import { getModel, listModels, markDeleting, noSuchModel, putModel, setOwner } from '../../store/models.ts';
import { readSnapshot } from '../../store/snapshot.ts';
import { authorize, permits, visibility } from '../auth/guard.ts';
import { decisionsShown } from '../decisions-shown.ts';
import type { ApiDeps } from '../deps.ts';
import { ApiError, jsonBody } from '../http.ts';
import { existingModelInView, modelInView } from '../model-in-view.ts';
import { ObjectNameSchema, ScopeRefSchema } from '../names.ts';
import { errors, jsonContent, jsonRequest, newRouter } from '../openapi.ts';
import { recorded } from '../recorded.ts';
import { refuseBeyondScopeCap } from '../scope-caps.ts';
import { resolveOrRefuse } from '../scopes.ts';
import { tokensPerSec } from '../throughput.ts';

const MODEL_BODY_LIMIT = 256 * 1024;
const OWNER_BODY_LIMIT = 4 * 1024;

/** How deep an engine's own fields may nest: far more than any engine needs, and safe to store. */
const ENGINE_DEPTH = 32;

/** Whether a JSON value nests deeper than `levels`, looked at level by level so no depth overflows a stack. */
function nestsDeeperThan(value: unknown, levels: number): boolean {
  let layer: unknown[] = [value];
  for (let depth = 0; layer.length > 0; depth++) {
    if (depth > levels) return true;
    layer = layer.flatMap((inner) =>
      typeof inner === 'object' && inner !== null ? Object.values(inner) : [],
    );
  }
  return false;
}

const EngineSchema = z
  .looseObject({ kind: z.enum(['vllm', 'llama.cpp', 'sim', 'command']) })
  .refine((engine) => !nestsDeeperThan(engine, ENGINE_DEPTH), {
    error: `nests deeper than ${ENGINE_DEPTH} levels`,
  })
  .openapi('Engine', { description: "How to start the profile; fields beyond kind are the engine's own" });

const ProfileSchema = z
  .strictObject({
    name: ObjectNameSchema,
    priority: z.number().int().min(-1000).max(1000).default(0),
    resources: ResourcesSchema,
    gpu_model: z.string().min(1).max(63).optional(),
    default_concurrency: z.number().int().min(1).max(1_000_000).optional(),
    engine: EngineSchema.optional(),
  })
  .openapi('Profile');

const ModelInputSchema = z
  .strictObject({
    owner: ScopeRefSchema.optional(),
    min_replicas: z.number().int().min(0).max(10_000).default(0),
    max_replicas: z.number().int().min(1).max(10_000),
    target_tokens_per_sec: tokensPerSec().positive().optional(),
    profiles: z.array(ProfileSchema).min(1, { error: 'needs at least one profile' }).max(32),
  })
  .openapi('ModelInput');

export const DecisionSchema = z
  .object({
    at: z.string(),
    action: z.string(),
    reason: z.string(),
    replica: z.string().optional(),
    profile: z.string().optional(),
    node: z.string().optional(),
    inputs: z.record(z.string(), z.unknown()),
  })
  .openapi('Decision');

const ModelViewSchema = z
  .object({
    name: z.string(),
    owner: z.string().nullable(),
    owner_name: z.string().nullable(),
    min_replicas: z.number(),
    max_replicas: z.number(),
    target_tokens_per_sec: z.number().optional(),
    replicas: z.record(z.string(), z.number()),
    in_flight: z.number().nullable(),
    capacity_at_slo: z.number(),
    status: z.string(),
    last_decision: DecisionSchema.nullable(),
  })
  .openapi('ModelSummary');

const ReplicaSchema = z.object({
  id: z.string(),
  profile: z.string(),
  node: z.string(),
  resources: ResourcesSchema,
  state: z.string(),
  created_at: z.string(),
});

const ModelDetailSchema = ModelViewSchema.extend({
  profiles: z.array(ProfileSchema),
  replicas_list: z.array(ReplicaSchema),
  decisions: z.array(DecisionSchema),
}).openapi('Model');

const NameParam = z.object({ name: ObjectNameSchema });

export function modelsRouter(deps: ApiDeps) {
  const app = newRouter();
  const { sql } = deps;
  const now = deps.now ?? Date.now;

  /** The list view of models: replica counts, load and capacity at SLO, the newest decision as `shown`. */
  const summaries = async (shown: (decision: StoredDecision) => StoredDecision, names?: string[]) => {
    const snapshot = await readSnapshot(sql, now(), deps.policy);
    const models = await listModels(sql, names);
    const last = await latestDecisions(
      sql,
      models.map((model) => model.name),
    );
    const view = buildView(snapshot);
    return models.map((model) => {
      const replicas = view.replicasOfModel(model.name);
      const counts = Object.fromEntries(ACTIVE_STATES.map((state) => [state, 0]));
      for (const replica of replicas) counts[replica.state]++;
      const figures = modelFigures(view, model);
      const decision = last.get(model.name) ?? null;
      const status = model.deleting
        ? 'deleting'
        : !decision
          ? 'new'
          : decision.inputs.pending
            ? 'pending'
            : decision.action === 'none'
              ? 'steady'
              : 'scaling';
      const summary = {
        name: model.name,
        owner: model.owner,
        owner_name: model.owner ? view.displayName(model.owner) : null,
        min_replicas: model.min_replicas,
        max_replicas: model.max_replicas,
        ...(model.target_tokens_per_sec === undefined
          ? {}
          : { target_tokens_per_sec: model.target_tokens_per_sec }),
        replicas: counts,
        in_flight: loadOf(view, model.name).inFlight,
        capacity_at_slo: figures.capacity,
        status,
        last_decision: decision && shown(decision),
      };
      return { summary, replicas, profiles: model.profiles };
    });
  };

  app.openapi(
    createRoute({
      middleware: [permits('change-model'), jsonBody(MODEL_BODY_LIMIT)] as const,
      method: 'put',
      path: '/models/{name}',
      tags: ['models'],
      summary: 'Create or replace a model and start (or tell) its reconciler',
      request: { params: NameParam, body: jsonRequest(ModelInputSchema) },
      responses: {
        200: jsonContent(z.object({ name: z.string() }), 'updated'),
        201: jsonContent(z.object({ name: z.string() }), 'created'),
        ...errors(400, 409, 413, 503),
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const input = c.req.valid('json');
      if (input.min_replicas > input.max_replicas) {
        throw new ApiError(
          400,
          `min_replicas (${input.min_replicas}) is above max_replicas (${input.max_replicas})`,
        );
      }
      const names = input.profiles.map((p) => p.name);
      const twice = names.find((n, i) => names.indexOf(n) !== i);
      if (twice) throw new ApiError(400, `profile "${twice}" is given twice`);
      const empty = input.profiles.find((p) => isEmpty(p.resources));
      if (empty)
        throw new ApiError(
          400,
          `profile "${empty.name}" asks for no resources; give gpus, cores or memory_gib`,
        );
      const owner = input.owner ? (await resolveOrRefuse(c, input.owner)).key : null;
      const existing = await modelInView(c, sql, name, 'change-model');
      // Model names are one namespace: a name taken outside the caller's view can only be refused, and
      // the refusal names nothing of its owner.
      if (!existing && (await getModel(sql, name))) {
        throw new ApiError(409, `the name "${name}" is taken by a model of another scope; choose another`);
      }
      // Both the owner it has and the one it gets must be the caller's to manage.
      if (existing) await authorize(c, 'change-model', { scope: existing.owner, model: name });
      await authorize(c, 'change-model', { scope: owner, model: name });
      const model: Model = { name, ...input, owner };
      const created = await recorded(
        c,
        sql,
        'model.put',
        `model:${name}`,
        (tx) => getModel(tx, name),
        async (tx) => {
          if (!existing) await refuseBeyondScopeCap(c, tx, 'models', deps.scopeCaps);
          return putModel(tx, model);
        },
      );
      await deps.reconcilers.tell([name], 'specChanged');
      return c.json({ name }, created ? 201 : 200);
    },
  );

  app.openapi(
    createRoute({
      middleware: [permits('read')] as const,
      method: 'get',
      path: '/models',
      tags: ['models'],
      summary: 'List models with their replicas, load, capacity at SLO and newest decision',
      responses: { 200: jsonContent(z.array(ModelViewSchema)), ...errors(503) },
    }),
    async (c) => {
      const shown = await visibility(c);
      const visible = (await summaries(await decisionsShown(c))).filter(({ summary }) =>
        shown(summary.owner),
      );
      return c.json(
        visible.map(({ summary }) => summary),
        200,
      );
    },
  );

  app.openapi(
    createRoute({
      middleware: [permits('read')] as const,
      method: 'get',
      path: '/models/{name}',
      tags: ['models'],
      summary: 'One model with its profiles, replicas and newest decisions',
      request: { params: NameParam },
      responses: { 200: jsonContent(ModelDetailSchema), ...errors(404, 503) },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const shownDecision = await decisionsShown(c);
      const [found] = await summaries(shownDecision, [name]);
      // A model the caller may not see is one it is not told of.
      if (!found || !(await visibility(c))(found.summary.owner)) throw noSuchModel(name);
      const detail = {
        ...found.summary,
        profiles: found.profiles,
        replicas_list: found.replicas.map((r) => ({
          ...r,
          created_at: new Date(r.created_at).toISOString(),
        })),
        decisions: (await listDecisions(sql, name, 10)).map(shownDecision),
      };
      return c.json(detail as z.infer<typeof ModelDetailSchema>, 200);
    },
  );

  app.openapi(
    createRoute({
      middleware: [permits('change-model')] as const,
      method: 'delete',
      path: '/models/{name}',
      tags: ['models'],
      summary: 'Delete a model: its replicas are drained and stopped, then its reconciler ends',
      request: { params: NameParam },
      responses: { 200: jsonContent(z.object({ deleting: z.string() })), ...errors(404, 503) },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const model = await existingModelInView(c, sql, name, 'change-model');
      await authorize(c, 'change-model', { scope: model.owner, model: name });
      await recorded(
        c,
        sql,
        'model.delete',
        `model:${name}`,
        (tx) => getModel(tx, name),
        async (tx) => {
          if (!(await markDeleting(tx, name))) throw noSuchModel(name);
        },
      );
      await deps.reconcilers.tell([name], 'deleted');
      return c.json({ deleting: name }, 200);
    },
  );

  app.openapi(
    createRoute({
      middleware: [permits('change-model'), jsonBody(OWNER_BODY_LIMIT)] as const,
      method: 'post',
      path: '/models/{name}/owner',
      tags: ['models'],
      summary: 'Set or clear ("") the owner of a model',
      request: {
        params: NameParam,
        body: jsonRequest(z.strictObject({ owner: z.union([ScopeRefSchema, z.literal('')]) })),
      },
      responses: {
        200: jsonContent(z.object({ model: z.string(), owner: z.string().nullable() })),
        ...errors(400, 404, 413, 503),
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const { owner: text } = c.req.valid('json');
      const model = await existingModelInView(c, sql, name, 'change-model');
      await authorize(c, 'change-model', { scope: model.owner, model: name });
      const owner = text === '' ? null : (await resolveOrRefuse(c, text)).key;
      await authorize(c, 'change-model', { scope: owner, model: name });
      await recorded(
        c,
        sql,
        'model.owner',
        `model:${name}`,
        (tx) => getModel(tx, name),
        async (tx) => {
          if (!(await setOwner(tx, name, owner))) throw noSuchModel(name);
        },
      );
      await deps.reconcilers.tell([name], 'ownerChanged');
      return c.json({ model: name, owner }, 200);
    },
  );

  return app;
}
