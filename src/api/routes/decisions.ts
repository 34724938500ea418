import { createRoute, z } from '@hono/zod-openapi';
import { NotFound } from '../../domain/errors.ts';
import { listDecisions } from '../../store/decisions.ts';
import { getModel } from '../../store/models.ts';
import { permits, visibility } from '../auth/guard.ts';
import type { ApiDeps } from '../deps.ts';
import { ObjectNameSchema } from '../names.ts';
import { errors, jsonContent, newRouter } from '../openapi.ts';
import { DecisionSchema } from './models.ts';

/** A model's reconcile history, newest first: what was done and why. */
export function decisionsRouter(deps: ApiDeps) {
  const app = newRouter();
  app.openapi(
    createRoute({
      middleware: [permits('read')] as const,
      method: 'get',
      path: '/models/{name}/decisions',
      tags: ['models'],
      summary: "A model's decisions, newest first",
      request: {
        params: z.object({ name: ObjectNameSchema }),
        query: z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(50) }),
      },
      responses: { 200: jsonContent(z.array(DecisionSchema)), ...errors(400, 404, 503) },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const model = await getModel(deps.sql, name);
      // A model the caller may not see is one it is not told of.
      if (!model || !(await visibility(c))(model.owner)) throw new NotFound(`there is no model "${name}"`);
      return c.json(await listDecisions(deps.sql, name, c.req.valid('query').limit), 200);
    },
  );
  return app;
}
