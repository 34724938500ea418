import { createRoute, z } from '@hono/zod-openapi';
import { permitsNode } from '../../../auth/guard.ts';
import { LOAD_COUNTS, LoadReceiptSchema, sinceOnlyWhenWaiting } from '../../../contracts/schemas/load.ts';
import { ObjectNameSchema } from '../../../contracts/schemas/names.ts';
import { NODE_STATES, REPLICA_STATES } from '../../../domain/cluster.ts';
import { jsonBody } from '../../http.ts';
import { errors, jsonContent, jsonRequest } from '../../openapi.ts';

// What an agent calls for its node (ARCHITECTURE.md "Agents"), as the OpenAPI document describes it;
// what each does is in agent-handlers.ts. An agent token calls them for its own node only.

const NodeParams = z.object({ name: ObjectNameSchema });
const ReplicaParams = z.object({
  name: ObjectNameSchema,
  id: z.string().regex(/^[A-Za-z0-9][\w.-]{0,127}$/, { error: 'is not a replica ID' }),
});

const WantedSchema = z
  .object({
    name: z.string(),
    state: z.enum(NODE_STATES),
    back: z.boolean().describe('The node was lost and is ready again.'),
    wanted: z
      .array(z.object({ id: z.string(), state: z.enum(REPLICA_STATES) }))
      .describe('The replicas the store wants on the node: the agent stops the engine of any other.'),
    temporal: z
      .object({ credential: z.string(), expires_at: z.string() })
      .optional()
      .describe(
        "The node's credential for Temporal server (when it authorizes calls): it reaches the node's own task queue only, until expires_at; each heartbeat answers a fresh one.",
      ),
  })
  .openapi('Heartbeat');

export const heartbeatRoute = createRoute({
  middleware: [permitsNode('run-node')] as const,
  method: 'post',
  path: '/nodes/{name}/heartbeat',
  tags: ['agents'],
  summary: "An agent's node lives: lost no more, and the replicas it should run",
  request: { params: NodeParams },
  responses: { 200: jsonContent(WantedSchema), ...errors(400, 404, 503) },
});

const ReplicaReportSchema = z
  .discriminatedUnion('state', [
    z.strictObject({
      state: z.literal('ready'),
      port: z.number().int().min(1).max(65535).openapi({
        description:
          "the engine's port on the node: it serves at http://<the node's address>:<port>/v1, the address being its agent token's",
      }),
    }),
    z.strictObject({ state: z.literal('failed'), reason: z.string().min(1).max(2000) }),
    z.strictObject({ state: z.literal('stopped') }),
  ])
  .openapi('ReplicaReport');

export const replicaReportRoute = createRoute({
  middleware: [permitsNode('run-node'), jsonBody(8 * 1024)] as const,
  method: 'post',
  path: '/nodes/{name}/replicas/{id}/report',
  tags: ['agents'],
  summary: 'A replica of the node is ready (on which port), failed (why) or stopped',
  request: { params: ReplicaParams, body: jsonRequest(ReplicaReportSchema) },
  responses: {
    200: jsonContent(z.object({ id: z.string(), state: z.enum(REPLICA_STATES), moved: z.boolean() })),
    ...errors(400, 404, 413, 503),
  },
});

const EngineLoadSchema = z.strictObject(LOAD_COUNTS).superRefine(sinceOnlyWhenWaiting).openapi('EngineLoad');

export const replicaLoadRoute = createRoute({
  middleware: [permitsNode('run-node'), jsonBody(1024)] as const,
  method: 'post',
  path: '/nodes/{name}/replicas/{id}/load',
  tags: ['agents'],
  summary: "A replica's engine's running and waiting requests, counted as the load source replica:<id>",
  request: { params: ReplicaParams, body: jsonRequest(EngineLoadSchema) },
  responses: {
    202: jsonContent(LoadReceiptSchema, 'accepted'),
    ...errors(400, 404, 413, 503),
  },
});
