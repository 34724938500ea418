import { createRoute, z } from '@hono/zod-openapi';
import { NotFound } from '../../domain/errors.ts';
import { ROLES } from '../../domain/roles.ts';
import { displayName } from '../../domain/scope-names.ts';
import { listScopes } from '../../store/tenancy.ts';
import { deleteToken, getToken, listTokens, type TokenGrant } from '../../store/tokens.ts';
import { identityOf, permits } from '../auth/guard.ts';
import { issueToken } from '../auth/issue.ts';
import { newSecret } from '../auth/secrets.ts';
import type { ApiDeps } from '../deps.ts';
import { ApiError, jsonBody } from '../http.ts';
import { ObjectNameSchema, ScopeRefSchema } from '../names.ts';
import { errors, jsonContent, jsonRequest, newRouter } from '../openapi.ts';
import { recorded } from '../recorded.ts';
import { resolveOrRefuse } from '../scopes.ts';
import { TimestampSchema } from '../timestamps.ts';

/** Token names are who made a change (`updated_by`, the audit log): an e-mail address fits. */
const TokenNameSchema = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._@-]{0,99}$/, {
  error: 'must be 1 to 100 letters, digits, ".", "_", "@" or "-", starting with a letter or digit',
});

const TokenInputSchema = z
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
    created_by: z.string(),
    created_at: z.string(),
    expires_at: z.string().nullable(),
  })
  .openapi('Token');

/** Checks what a role may be given: an operator needs a scope, admin and metrics take none, only a reporter takes models. */
function checkGrant(input: z.infer<typeof TokenInputSchema>, now: number) {
  if (input.role === 'operator' && !input.scope)
    throw new ApiError(400, 'an operator token needs a scope: the one it manages beneath');
  if (input.role === 'admin' && input.scope)
    throw new ApiError(400, 'an admin token takes no scope: it may do anything anywhere');
  if (input.role === 'metrics' && input.scope)
    throw new ApiError(400, 'a metrics token takes no scope: the metrics cover every tenant');
  if (input.models && input.role !== 'reporter')
    throw new ApiError(400, 'only a reporter token is limited to models');
  if (input.expires_at && Date.parse(input.expires_at) <= now)
    throw new ApiError(400, `expires_at ${input.expires_at} is not in the future`);
}

/** Bearer tokens (admin only): made with their secret shown once, listed without it, revoked. */
export function tokensRouter(deps: ApiDeps) {
  const app = newRouter();
  const { sql } = deps;
  const now = deps.now ?? Date.now;

  app.openapi(
    createRoute({
      middleware: [permits('manage-tokens'), jsonBody(4 * 1024)] as const,
      method: 'post',
      path: '/tokens',
      tags: ['tokens'],
      summary: 'Make a token; its secret is in this answer only',
      request: { body: jsonRequest(TokenInputSchema) },
      responses: { 201: jsonContent(IssuedSchema, 'created'), ...errors(400, 409, 413, 503) },
    }),
    async (c) => {
      const input = c.req.valid('json');
      checkGrant(input, now());
      const grant: TokenGrant = {
        name: input.name,
        role: input.role,
        scope: input.scope ? (await resolveOrRefuse(c, input.scope)).key : null,
        models: input.models ?? null,
        expires_at: input.expires_at ? new Date(input.expires_at).toISOString() : null,
      };
      const secret = newSecret();
      await issueToken(sql, grant, secret, identityOf(c).name);
      return c.json({ name: grant.name, role: grant.role, scope: grant.scope, token: secret }, 201);
    },
  );

  app.openapi(
    createRoute({
      middleware: [permits('manage-tokens')] as const,
      method: 'get',
      path: '/tokens',
      tags: ['tokens'],
      summary: 'List tokens (never their secrets)',
      responses: { 200: jsonContent(z.array(TokenViewSchema)), ...errors(503) },
    }),
    async (c) => {
      const [tokens, scopes] = await Promise.all([listTokens(sql), listScopes(sql)]);
      const byKey = new Map(scopes.map((scope) => [scope.key, scope]));
      const body = tokens.map((token) => ({
        ...token,
        scope_name: token.scope ? displayName(byKey, token.scope) : null,
      }));
      return c.json(body, 200);
    },
  );

  app.openapi(
    createRoute({
      middleware: [permits('manage-tokens')] as const,
      method: 'delete',
      path: '/tokens/{name}',
      tags: ['tokens'],
      summary: 'Revoke a token: it stops working at once',
      request: { params: z.object({ name: TokenNameSchema }) },
      responses: { 200: jsonContent(z.object({ revoked: z.string() })), ...errors(400, 404, 503) },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      await recorded(
        c,
        sql,
        'token.revoke',
        `token:${name}`,
        (tx) => getToken(tx, name),
        async (tx) => {
          if (!(await deleteToken(tx, name))) throw new NotFound(`there is no token "${name}"`);
        },
      );
      return c.json({ revoked: name }, 200);
    },
  );
  return app;
}
