import { createRoute, z } from '@hono/zod-openapi';
import { ownerWarnings } from '../../../policy/owner-warnings.ts';
import { isEmpty } from '../../../policy/resources.ts';
import { getModel, type ModelSpec, markDeleting, noSuchModel, putModel } from '../../../store/models.ts';
import { readSnapshot } from '../../../store/snapshot.ts';
import { authorize, permits } from '../../auth/guard.ts';
import type { ApiDeps } from '../../deps.ts';
import { ApiError, jsonBody } from '../../http.ts';
import { existingModelInView, modelInView } from '../../model-in-view.ts';
import { errors, jsonContent, jsonRequest, newRouter } from '../../openapi.ts';
import { recorded } from '../../recorded.ts';
import { refuseBeyondScopeCap } from '../../scope-caps.ts';
import { tokensPerSec } from '../../throughput.ts';
import { NameParam, OwnerInputSchema, ownerKey, ProfileSchema, WarningsSchema } from './schemas.ts';

const MODEL_BODY_LIMIT = 256 * 1024;

const ModelInputSchema = z
  .strictObject({
    owner: OwnerInputSchema.optional().openapi({
      description: 'absent keeps the stored owner (none for a new model); "" or null clears it',
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

/** A model's spec: create or replace it, and delete it. */
export function modelSpecRouter(deps: ApiDeps) {
  const app = newRouter();
  const { sql } = deps;
  const now = deps.now ?? Date.now;

  app.openapi(
    createRoute({
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
      const given = input.owner === undefined ? undefined : await ownerKey(c, input.owner);
      const existing = await modelInView(c, sql, name, 'change-model');
      // Model names are one namespace: a name taken outside the caller's view can only be refused, and
      // the refusal names nothing of its owner.
      if (!existing && (await getModel(sql, name))) {
        throw new ApiError(409, `the name "${name}" is taken by a model of another scope; choose another`);
      }
      const owner = given === undefined ? (existing?.owner ?? null) : given;
      // Both the owner it has and the one it gets must be the caller's to manage.
      if (existing) await authorize(c, 'change-model', { scope: existing.owner, model: name });
      await authorize(c, 'change-model', { scope: owner, model: name });
      const spec: ModelSpec = { name, ...input, owner: given };
      // Moved (or created) under an owner: say when a limit there stops its next replica.
      const moved = owner !== null && owner !== existing?.owner;
      const warnings = moved
        ? ownerWarnings(await readSnapshot(sql, now(), deps.policy), {
            name,
            owner,
            min_replicas: input.min_replicas,
            max_replicas: input.max_replicas,
            profiles: input.profiles,
          })
        : [];
      const created = await recorded(
        c,
        sql,
        'model.put',
        `model:${name}`,
        (tx) => getModel(tx, name),
        async (tx) => {
          if (!existing) await refuseBeyondScopeCap(c, tx, 'models', deps.scopeCaps);
          return putModel(tx, spec);
        },
      );
      await deps.reconcilers.tell([name], 'specChanged');
      return c.json({ name, ...(warnings.length > 0 ? { warnings } : {}) }, created ? 201 : 200);
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

  return app;
}
