import { createRoute, z } from '@hono/zod-openapi';
import { permits } from '../../auth/guard.ts';
import { ObjectNameSchema } from '../../contracts/schemas/names.ts';
import { sizeForThroughput } from '../../policy/sizing.ts';
import { setTarget } from '../../store/models.ts';
import { readSnapshot } from '../../store/snapshot.ts';
import type { ApiDeps } from '../deps.ts';
import { jsonBody } from '../http.ts';
import { modelToChange } from '../model-in-view.ts';
import { errors, jsonContent, jsonRequest, newRouter } from '../openapi.ts';
import { modelChange, recordedChange } from '../recorded.ts';
import { tokensPerSec } from '../throughput.ts';

const SizingSchema = z
  .object({
    plan: z.array(
      z.object({
        profile: z.string(),
        replicas: z.number(),
        tokens_per_sec: z.number(),
        preempts: z
          .array(z.string())
          .optional()
          .openapi({ description: 'replicas of a lower claim these would preempt' }),
      }),
    ),
    reaches_tokens_per_sec: z.number(),
    fits: z.boolean(),
    blocked_by: z.array(z.string()),
    applied: z.boolean(),
  })
  .openapi('SizingPlan');

/**
 * Sizes a model for a throughput against the room there is; with apply, stores it as its target. Even
 * the plan alone asks for the right to change the model: it is the first half of that change. DELETE
 * clears the target.
 */
export function targetRouter(deps: ApiDeps) {
  const app = newRouter();
  app.openapi(
    createRoute({
      middleware: [permits('change-model'), jsonBody(4 * 1024)] as const,
      method: 'post',
      path: '/models/{name}/target',
      tags: ['models'],
      summary: 'Plan the replicas a throughput needs (and with apply, make it the target)',
      request: {
        params: z.object({ name: ObjectNameSchema }),
        body: jsonRequest(
          z.strictObject({
            tokens_per_sec: tokensPerSec().positive(),
            apply: z.boolean().default(false),
          }),
        ),
      },
      responses: { 200: jsonContent(SizingSchema), ...errors(400, 404, 413, 503) },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const { tokens_per_sec, apply } = c.req.valid('json');
      await modelToChange(c, deps.sql, name);
      const snapshot = await readSnapshot(deps.sql, (deps.now ?? Date.now)(), deps.policy);
      const plan = sizeForThroughput(snapshot, name, tokens_per_sec);
      if (apply) {
        await recordedChange(c, deps, {
          action: 'model.target',
          ...modelChange(name, 'specChanged'),
          // Checked again under the model's lock: it may have moved to another owner since.
          apply: async (tx) => {
            await modelToChange(c, tx, name);
            await setTarget(tx, name, tokens_per_sec);
          },
        });
      }
      return c.json({ ...plan, applied: apply }, 200);
    },
  );

  app.openapi(
    createRoute({
      middleware: [permits('change-model')] as const,
      method: 'delete',
      path: '/models/{name}/target',
      tags: ['models'],
      summary: 'Clear the target throughput of a model (200 also when it has none)',
      request: { params: z.object({ name: ObjectNameSchema }) },
      responses: {
        200: jsonContent(z.object({ model: z.string(), target_tokens_per_sec: z.null() })),
        ...errors(404, 503),
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const model = await modelToChange(c, deps.sql, name);
      if (model.target_tokens_per_sec !== undefined) {
        await recordedChange(c, deps, {
          action: 'model.target',
          ...modelChange(name, 'specChanged'),
          apply: async (tx) => {
            await modelToChange(c, tx, name);
            await setTarget(tx, name, null);
          },
        });
      }
      return c.json({ model: name, target_tokens_per_sec: null }, 200);
    },
  );
  return app;
}
