import { createRoute, z } from '@hono/zod-openapi';
import { permits, permitsNode } from '../../../auth/guard.ts';
import { NameParam } from '../../../contracts/schemas/names.ts';
import { GpuModelSchema, LabelsSchema } from '../../../contracts/schemas/node-grant.ts';
import { ResourcesSchema } from '../../../contracts/schemas/resources.ts';
import { NODE_DRIVERS, NODE_STATES } from '../../../domain/cluster.ts';
import { jsonBody } from '../../http.ts';
import { errors, jsonContent, jsonRequest } from '../../openapi.ts';

// The nodes' routes as the OpenAPI document describes them; what they do is in handlers.ts.

const BODY_LIMIT = 16 * 1024;

const NodeInputSchema = z
  .strictObject({
    capacity: ResourcesSchema,
    gpu_model: GpuModelSchema.optional(),
    labels: LabelsSchema.optional(),
    driver: z.enum(NODE_DRIVERS).optional().openapi({
      description:
        "what runs its replicas: sim (the simulated cluster, the default for a new node) or agent (an llmgw agent on the machine); a PUT without it keeps the node's",
    }),
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
    state: z.enum(NODE_STATES),
    driver: z.enum(NODE_DRIVERS),
    heartbeat_at: z.string().nullable().describe("When an agent's node last heard from its agent."),
    address: z
      .string()
      .nullable()
      .describe("An agent's node: the address its agent token gives, where the gateway reaches its engines."),
    replicas: z.number(),
  })
  .openapi('Node');

const RegisteredSchema = z.object({
  name: z.string(),
  address: z
    .string()
    .optional()
    .describe("To an agent: its node's address (its token's), where its engines listen."),
});

export const putNodeRoute = createRoute({
  middleware: [permitsNode('run-node'), jsonBody(BODY_LIMIT)] as const,
  method: 'put',
  path: '/nodes/{name}',
  tags: ['cluster'],
  summary:
    'Add or update a node (capacity may not drop below what its replicas hold); an agent registers its own',
  request: { params: NameParam, body: jsonRequest(NodeInputSchema) },
  responses: {
    200: jsonContent(RegisteredSchema, 'updated'),
    201: jsonContent(RegisteredSchema, 'created'),
    ...errors(400, 409, 413, 503),
  },
});

export const listNodesRoute = createRoute({
  middleware: [permits('read-cluster')] as const,
  method: 'get',
  path: '/nodes',
  tags: ['cluster'],
  summary: 'List nodes with what runs, what is reserved and what is free',
  responses: { 200: jsonContent(z.array(NodeViewSchema)), ...errors(503) },
});

/** Cordoning and uncordoning: the verb of the path and the state it leaves the node in. */
export const STATE_CHANGES = [
  { verb: 'cordon', state: 'cordoned', summary: 'Place no new replica on the node' },
  { verb: 'uncordon', state: 'ready', summary: 'Place replicas on the node again' },
] as const;

export const nodeStateRoute = ({ verb, summary }: (typeof STATE_CHANGES)[number]) =>
  createRoute({
    middleware: [permits('change-node')] as const,
    method: 'post',
    path: `/nodes/{name}/${verb}`,
    tags: ['cluster'],
    summary,
    request: { params: NameParam },
    responses: {
      200: jsonContent(z.object({ name: z.string(), state: z.string() })),
      ...errors(404, 503),
    },
  });

export const deleteNodeRoute = createRoute({
  middleware: [permits('change-node')] as const,
  method: 'delete',
  path: '/nodes/{name}',
  tags: ['cluster'],
  summary: 'Remove a node that runs no replica',
  request: { params: NameParam },
  responses: { 200: jsonContent(z.object({ removed: z.string() })), ...errors(404, 409, 503) },
});
