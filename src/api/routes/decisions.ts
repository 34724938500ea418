import { createRoute, z } from '@hono/zod-openapi';
import { permits } from '../../auth/guard.ts';
import { DecisionSchema } from '../../contracts/schemas/models.ts';
import { ObjectNameSchema } from '../../contracts/schemas/names.ts';
import { listDecisions } from '../../store/decisions.ts';
import { decisionsShown } from '../decisions-shown.ts';
import type { ApiDeps } from '../deps.ts';
import { existingModelInView } from '../model-in-view.ts';
import { errors, jsonContent, newRouter } from '../openapi.ts';

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
      await existingModelInView(c, deps.sql, name);
      const decisions = await listDecisions(deps.sql, name, c.req.valid('query').limit);
      return c.json(decisions.map(await decisionsShown(c)), 200);
    },
  );
  return app;
}
