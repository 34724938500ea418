import { createRoute, z } from '@hono/zod-openapi';
import { permits } from '../../../auth/guard.ts';
import { ObjectNameSchema, ScopeRefSchema } from '../../../contracts/schemas/names.ts';
import { NodeAddressSchema, NodeBoundsSchema } from '../../../contracts/schemas/node-grant.ts';
import { nullableRef } from '../../../contracts/schemas/nullable.ts';
import { ROLES } from '../../../domain/roles.ts';
import { jsonBody } from '../../http.ts';
import { errors, jsonContent, jsonRequest } from '../../openapi.ts';
import { TimestampSchema } from '../../timestamps.ts';

// The tokens' routes as the OpenAPI document describes them; what they do is in handlers.ts.

/** Token names are who made a change (`updated_by`, the audit log): an e-mail address fits. */
const TokenNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/, {
  error: 'must be 1 to 100 letters, digits, ".", "_", "@" or "-", starting with a letter or digit',
});

export const TokenInputSchema = z
  .strictObject({
    name: TokenNameSchema,
    role: z.enum(ROLES),
    scope: ScopeRefSchema.optional().openapi({
      description: "an operator's scope (required), or the subtree a viewer or reporter is limited to",
    }),
    models: z
      .array(ObjectNameSchema)
      .min(1)
      .max(100)
      .optional()
      .openapi({ description: 'the only models a reporter may report load for' }),
    node: ObjectNameSchema.optional().openapi({
      description: 'the node an agent registers and reports for (required for an agent)',
    }),
    node_address: NodeAddressSchema.optional().openapi({
      description:
        "an agent's node's IP address or host name (required for an agent): its engines listen there, and the gateway reaches them there only",
    }),
    node_bounds: NodeBoundsSchema.optional().openapi({
      description: "the most an agent's node may declare when it registers (required for an agent)",
    }),
    expires_at: TimestampSchema.optional(),
  })
  .openapi('TokenInput');

const IssuedSchema = z
  .object({
    name: z.string(),
    role: z.enum(ROLES),
    scope: z.string().nullable(),
    token: z.string().openapi({ description: 'the secret: shown this once, kept nowhere' }),
  })
  .openapi('IssuedToken');

const TokenViewSchema = z
  .object({
    name: z.string(),
    role: z.enum(ROLES),
    scope: z.string().nullable(),
    scope_name: z.string().nullable(),
    models: z.array(z.string()).nullable(),
    node: z.string().nullable(),
    node_address: z.string().nullable(),
    node_bounds: nullableRef(NodeBoundsSchema),
    created_by: z.string(),
    created_at: z.string(),
    expires_at: z.string().nullable(),
  })
  .openapi('Token');

export const createTokenRoute = createRoute({
  middleware: [permits('manage-tokens'), jsonBody(4 * 1024)] as const,
  method: 'post',
  path: '/tokens',
  tags: ['tokens'],
  summary: 'Make a token; its secret is in this answer only',
  request: { body: jsonRequest(TokenInputSchema) },
  responses: { 201: jsonContent(IssuedSchema, 'created'), ...errors(400, 409, 413, 503) },
});

export const listTokensRoute = createRoute({
  middleware: [permits('manage-tokens')] as const,
  method: 'get',
  path: '/tokens',
  tags: ['tokens'],
  summary: 'List tokens (never their secrets)',
  responses: { 200: jsonContent(z.array(TokenViewSchema)), ...errors(503) },
});

export const revokeTokenRoute = createRoute({
  middleware: [permits('manage-tokens')] as const,
  method: 'delete',
  path: '/tokens/{name}',
  tags: ['tokens'],
  summary: 'Revoke a token: it stops working at once',
  request: { params: z.object({ name: TokenNameSchema }) },
  responses: { 200: jsonContent(z.object({ revoked: z.string() })), ...errors(400, 404, 503) },
});
