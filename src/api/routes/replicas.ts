import { createRoute, z } from '@hono/zod-openapi';
import { permits, visibility } from '../../auth/guard.ts';
import { ReplicaViewSchema } from '../../contracts/schemas/replicas.ts';
import { REPLICA_STATES } from '../../domain/cluster.ts';
import { protection } from '../../policy/guarantee.ts';
import { buildView } from '../../policy/view.ts';
import { listReplicasShown } from '../../store/replicas.ts';
import { readSnapshot } from '../../store/snapshot.ts';
import type { ApiDeps } from '../deps.ts';
import { errors, jsonContent, newRouter } from '../openapi.ts';

export function replicasRouter(deps: ApiDeps) {
  const app = newRouter();
  const now = deps.now ?? Date.now;

  app.openapi(
    createRoute({
      middleware: [permits('read')] as const,
      method: 'get',
      path: '/replicas',
      tags: ['cluster'],
      summary: 'List replicas, each saying whether a guarantee protects it',
      request: {
        query: z.strictObject({
          model: z.string().max(63).optional(),
          node: z.string().max(63).optional(),
          state: z.enum(REPLICA_STATES).optional(),
        }),
      },
      responses: { 200: jsonContent(z.array(ReplicaViewSchema)), ...errors(400, 503) },
    }),
    async (c) => {
      const filter = c.req.valid('query');
      const [snapshot, replicas, shown] = await Promise.all([
        readSnapshot(deps.sql, now(), deps.policy),
        listReplicasShown(deps.sql, filter),
        visibility(c),
      ]);
      const protectedBy = protection(buildView(snapshot));
      const owners = new Map(snapshot.models.map((model) => [model.name, model.owner]));
      const visible = replicas.filter((replica) => shown(owners.get(replica.model) ?? null));
      const body = visible.map((replica) => ({
        ...replica,
        protected: Boolean(protectedBy.get(replica.id)),
        created_at: new Date(replica.created_at).toISOString(),
        endpoint: replica.endpoint ?? null,
        // Left out (undefined) unless it frees room for a model.
        preempted_for: replica.preempted_for ?? undefined,
      }));
      return c.json(body, 200);
    },
  );
  return app;
}
