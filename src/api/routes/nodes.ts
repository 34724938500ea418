import { createRoute, z } from '@hono/zod-openapi';
import { Conflict, NotFound } from '../../domain/errors.ts';
import { ResourcesSchema } from '../../domain/resources.ts';
import { nodeUsage } from '../../policy/node-usage.ts';
import { complete, exceeding, formatResources, sum } from '../../policy/resources.ts';
import type { Db } from '../../store/db.ts';
import { pendingModels } from '../../store/decisions.ts';
import { deleteNode, listNodes, putNode, setNodeState } from '../../store/nodes.ts';
import { listReplicas } from '../../store/replicas.ts';
import { permits } from '../auth/guard.ts';
import type { ApiDeps } from '../deps.ts';
import { jsonBody } from '../http.ts';
import { ObjectNameSchema } from '../names.ts';
import { errors, jsonContent, jsonRequest, newRouter } from '../openapi.ts';
import { recorded } from '../recorded.ts';

const BODY_LIMIT = 16 * 1024;

const NodeInputSchema = z
  .strictObject({
    capacity: ResourcesSchema,
    gpu_model: z.string().min(1).max(63).optional(),
    labels: z.record(z.string().max(63), z.string().max(253)).optional(),
  })
  .openapi('NodeInput');

const NodeViewSchema = z
  .object({
    name: z.string(),
    capacity: ResourcesSchema,
    allocated: ResourcesSchema.describe(
      'What its starting, ready and draining replicas hold on the machine.',
    ),
    reserved: ResourcesSchema.describe(
      'What its pending replicas will take: room reserved, not yet started.',
    ),
    free: ResourcesSchema.describe('capacity - allocated - reserved.'),
    overcommitted: z.boolean().describe('What runs exceeds the capacity on some dimension (never expected).'),
    gpu_model: z.string().nullable(),
    labels: z.record(z.string(), z.string()),
    state: z.enum(['ready', 'cordoned', 'down']),
    replicas: z.number(),
  })
  .openapi('Node');

const NameParam = z.object({ name: ObjectNameSchema });

/** A node as the audit log keeps it, before and after a change. */
const nodeNamed = async (db: Db, name: string) => (await listNodes(db)).find((n) => n.name === name) ?? null;

export function nodesRouter(deps: ApiDeps) {
  const app = newRouter();
  const { sql } = deps;

  /** New room may let pending models place: tell those whose newest decision was pending. */
  const tellPending = async () => deps.reconcilers.tell(await pendingModels(sql), 'replicaChanged');

  app.openapi(
    createRoute({
      middleware: [permits('change-node'), jsonBody(BODY_LIMIT)] as const,
      method: 'put',
      path: '/nodes/{name}',
      tags: ['cluster'],
      summary: 'Add or update a node (capacity may not drop below what its replicas hold)',
      request: { params: NameParam, body: jsonRequest(NodeInputSchema) },
      responses: {
        200: jsonContent(z.object({ name: z.string() }), 'updated'),
        201: jsonContent(z.object({ name: z.string() }), 'created'),
        ...errors(400, 409, 413, 503),
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const input = c.req.valid('json');
      const held = sum((await listReplicas(sql, { node: name, activeOnly: true })).map((r) => r.resources));
      // An absent dimension is no capacity at all (placement reads it as 0), so it is compared as 0.
      const short = exceeding(held, complete(input.capacity));
      if (short) {
        throw new Conflict(
          `node ${name}'s replicas hold ${formatResources({ [short]: held[short] })}, more than the capacity given`,
        );
      }
      const created = await recorded(
        c,
        sql,
        'node.put',
        `node:${name}`,
        (tx) => nodeNamed(tx, name),
        (tx) =>
          putNode(tx, {
            name,
            capacity: input.capacity,
            gpu_model: input.gpu_model ?? null,
            labels: input.labels ?? {},
          }),
      );
      await tellPending();
      return c.json({ name }, created ? 201 : 200);
    },
  );

  app.openapi(
    createRoute({
      middleware: [permits('read-cluster')] as const,
      method: 'get',
      path: '/nodes',
      tags: ['cluster'],
      summary: 'List nodes with what runs, what is reserved and what is free',
      responses: { 200: jsonContent(z.array(NodeViewSchema)), ...errors(503) },
    }),
    async (c) => {
      const [nodes, replicas] = await Promise.all([listNodes(sql), listReplicas(sql, { activeOnly: true })]);
      const body = nodes.map((node) => {
        const here = replicas.filter((r) => r.node === node.name);
        return { ...node, ...nodeUsage(node, here), replicas: here.length };
      });
      return c.json(body, 200);
    },
  );

  for (const [verb, state] of [
    ['cordon', 'cordoned'],
    ['uncordon', 'ready'],
  ] as const) {
    app.openapi(
      createRoute({
        middleware: [permits('change-node')] as const,
        method: 'post',
        path: `/nodes/{name}/${verb}`,
        tags: ['cluster'],
        summary: verb === 'cordon' ? 'Place no new replica on the node' : 'Place replicas on the node again',
        request: { params: NameParam },
        responses: {
          200: jsonContent(z.object({ name: z.string(), state: z.string() })),
          ...errors(404, 503),
        },
      }),
      async (c) => {
        const { name } = c.req.valid('param');
        await recorded(
          c,
          sql,
          `node.${verb}`,
          `node:${name}`,
          (tx) => nodeNamed(tx, name),
          async (tx) => {
            if (!(await setNodeState(tx, name, state))) throw new NotFound(`there is no node "${name}"`);
          },
        );
        if (state === 'ready') await tellPending();
        return c.json({ name, state }, 200);
      },
    );
  }

  app.openapi(
    createRoute({
      middleware: [permits('change-node')] as const,
      method: 'delete',
      path: '/nodes/{name}',
      tags: ['cluster'],
      summary: 'Remove a node that runs no replica',
      request: { params: NameParam },
      responses: { 200: jsonContent(z.object({ removed: z.string() })), ...errors(404, 409, 503) },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      await recorded(
        c,
        sql,
        'node.delete',
        `node:${name}`,
        (tx) => nodeNamed(tx, name),
        async (tx) => {
          const outcome = await deleteNode(tx, name);
          if (outcome === 'missing') throw new NotFound(`there is no node "${name}"`);
          if (outcome === 'in-use')
            throw new Conflict(`replicas still run on node ${name}; cordon it and wait for them to stop`);
        },
      );
      return c.json({ removed: name }, 200);
    },
  );
  return app;
}
