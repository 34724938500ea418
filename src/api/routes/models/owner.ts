import { createRoute, z } from '@hono/zod-openapi';
import { ownerWarnings } from '../../../policy/owner-warnings.ts';
import { getModel, noSuchModel, setOwner } from '../../../store/models.ts';
import { readSnapshot } from '../../../store/snapshot.ts';
import { authorize, permits } from '../../auth/guard.ts';
import type { ApiDeps } from '../../deps.ts';
import { jsonBody } from '../../http.ts';
import { existingModelInView } from '../../model-in-view.ts';
import { errors, jsonContent, jsonRequest, newRouter } from '../../openapi.ts';
import { recorded } from '../../recorded.ts';
import { NameParam, OwnerInputSchema, ownerKey, WarningsSchema } from './schemas.ts';

const OWNER_BODY_LIMIT = 4 * 1024;

/** Who owns a model: the scope whose quota it counts against. */
export function modelOwnerRouter(deps: ApiDeps) {
  const app = newRouter();
  const { sql } = deps;
  const now = deps.now ?? Date.now;

  app.openapi(
    createRoute({
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
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const { owner: text = null } = c.req.valid('json');
      const model = await existingModelInView(c, sql, name, 'change-model');
      await authorize(c, 'change-model', { scope: model.owner, model: name });
      const owner = await ownerKey(c, text);
      await authorize(c, 'change-model', { scope: owner, model: name });
      // Accepted even where a limit stops the model's next replica: the answer says which limit.
      const warnings = owner
        ? ownerWarnings(await readSnapshot(sql, now(), deps.policy), { ...model, owner })
        : [];
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
      return c.json({ model: name, owner: owner ?? '', ...(warnings.length > 0 ? { warnings } : {}) }, 200);
    },
  );

  return app;
}
