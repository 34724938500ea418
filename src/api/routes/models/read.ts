import { createRoute, z } from '@hono/zod-openapi';
import { ResourcesSchema } from '../../../domain/resources.ts';
import { listDecisions } from '../../../store/decisions.ts';
import { noSuchModel } from '../../../store/models.ts';
import { permits, visibility } from '../../auth/guard.ts';
import { decisionsShown } from '../../decisions-shown.ts';
import type { ApiDeps } from '../../deps.ts';
import { errors, jsonContent, newRouter } from '../../openapi.ts';
import { DecisionSchema, NameParam, ProfileSchema } from './schemas.ts';
import { ModelViewSchema, modelSummaries } from './summaries.ts';

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

/** Reading models: the list with live figures and the newest decision, and one model in full. */
export function modelReadRouter(deps: ApiDeps) {
  const app = newRouter();
  const { sql } = deps;
  const now = deps.now ?? Date.now;

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
      const all = await modelSummaries(sql, now(), deps.policy, await decisionsShown(c));
      // Visibility is decided on the stored key: "" stands for no owner only in answers.
      const visible = all.filter(({ owner }) => shown(owner));
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
      const [found] = await modelSummaries(sql, now(), deps.policy, shownDecision, [name]);
      // A model the caller may not see is one it is not told of.
      if (!found || !(await visibility(c))(found.owner)) throw noSuchModel(name);
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

  return app;
}
