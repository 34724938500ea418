import { createRoute, z } from '@hono/zod-openapi';
import { permits, visibility } from '../../auth/guard.ts';
import { NodeUnreachable } from '../../cluster/replica-logs.ts';
import { ApiError } from '../../contracts/errors.ts';
import { Conflict, NotFound } from '../../domain/errors.ts';
import { getModel } from '../../store/models.ts';
import { getNode } from '../../store/nodes.ts';
import { getReplica } from '../../store/replicas.ts';
import type { ApiDeps } from '../deps.ts';
import { errors, jsonContent, newRouter } from '../openapi.ts';

const LogsSchema = z
  .object({ id: z.string(), node: z.string(), lines: z.array(z.string()) })
  .openapi('ReplicaLogs');

/** The end of a replica's engine log, read on its node by its agent (cluster/replica-logs.ts says how). */
export function replicaLogsRouter(deps: ApiDeps) {
  return newRouter().openapi(
    createRoute({
      middleware: [permits('read')] as const,
      method: 'get',
      path: '/replicas/{id}/logs',
      tags: ['cluster'],
      summary: "The last lines of a replica's engine log (stdout and stderr), from its node's agent",
      request: {
        params: z.object({ id: z.string().max(128) }),
        query: z.strictObject({
          tail: z.coerce
            .number()
            .int()
            .min(1)
            .max(10_000)
            .default(100)
            .openapi({ description: 'lines; default 100' }),
        }),
      },
      responses: { 200: jsonContent(LogsSchema), ...errors(400, 404, 409, 503) },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const { tail } = c.req.valid('query');
      const replica = await getReplica(deps.sql, id);
      const model = replica && (await getModel(deps.sql, replica.model));
      // A replica of a model the caller may not see is answered as one that does not exist.
      if (!replica || !(await visibility(c))(model?.owner ?? null))
        throw new NotFound(`there is no replica "${id}"`);
      const node = await getNode(deps.sql, replica.node);
      if (node?.driver !== 'agent' || !deps.replicaLogs) {
        throw new Conflict(
          `replica ${id} runs on the simulated node ${replica.node}, which keeps no engine log`,
        );
      }
      try {
        const lines = await deps.replicaLogs({ node: replica.node, replica: id, tail });
        return c.json({ id, node: replica.node, lines }, 200);
      } catch (error) {
        if (error instanceof NodeUnreachable) throw new ApiError(503, error.message);
        throw error;
      }
    },
  );
}
