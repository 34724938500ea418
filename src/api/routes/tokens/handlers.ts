import type { RouteHandler, z } from '@hono/zod-openapi';
import { identityOf } from '../../../auth/guard.ts';
import { issueToken } from '../../../auth/issue.ts';
import { ApiError } from '../../../contracts/errors.ts';
import { newSecret } from '../../../contracts/secrets.ts';
import { NotFound } from '../../../domain/errors.ts';
import { displayName } from '../../../domain/scope-names.ts';
import { listScopes } from '../../../store/tenancy.ts';
import { deleteToken, getToken, listTokens, type TokenGrant } from '../../../store/tokens.ts';
import type { ApiDeps } from '../../deps.ts';
import { recordedChange } from '../../recorded.ts';
import { resolveOrRefuse } from '../../scopes.ts';
import type { createTokenRoute, listTokensRoute, revokeTokenRoute, TokenInputSchema } from './routes.ts';

/** What each route of tokens does, over the store of `deps`. */
export function tokenHandlers(deps: ApiDeps) {
  const { sql } = deps;
  const now = deps.now ?? Date.now;

  const create: RouteHandler<typeof createTokenRoute> = async (c) => {
    const input = c.req.valid('json');
    checkGrant(input, now());
    const grant: TokenGrant = {
      name: input.name,
      role: input.role,
      scope: input.scope ? (await resolveOrRefuse(c, input.scope)).key : null,
      models: input.models ?? null,
      node: input.node ?? null,
      ...(input.node_address &&
        input.node_bounds && { node_grant: { address: input.node_address, bounds: input.node_bounds } }),
      expires_at: input.expires_at ? new Date(input.expires_at).toISOString() : null,
    };
    const secret = newSecret();
    await issueToken(sql, grant, secret, identityOf(c).name);
    return c.json({ name: grant.name, role: grant.role, scope: grant.scope, token: secret }, 201);
  };

  const list: RouteHandler<typeof listTokensRoute> = async (c) => {
    const [tokens, scopes] = await Promise.all([listTokens(sql), listScopes(sql)]);
    const byKey = new Map(scopes.map((scope) => [scope.key, scope]));
    const body = tokens.map(({ node_grant, ...token }) => ({
      ...token,
      node: token.node ?? null,
      node_address: node_grant?.address ?? null,
      node_bounds: node_grant?.bounds ?? null,
      scope_name: token.scope ? displayName(byKey, token.scope) : null,
    }));
    return c.json(body, 200);
  };

  const revoke: RouteHandler<typeof revokeTokenRoute> = async (c) => {
    const { name } = c.req.valid('param');
    await recordedChange(c, deps, {
      action: 'token.revoke',
      target: `token:${name}`,
      read: (tx) => getToken(tx, name),
      apply: async (tx) => {
        if (!(await deleteToken(tx, name))) throw new NotFound(`there is no token "${name}"`);
      },
    });
    return c.json({ revoked: name }, 200);
  };

  return { create, list, revoke };
}

/**
 * Checks what a role may be given: an operator and a client need a scope, admin and metrics take none,
 * only a reporter takes models, only an agent (and always) a node with its address and bounds.
 */
function checkGrant(input: z.infer<typeof TokenInputSchema>, now: number) {
  if (input.role === 'operator' && !input.scope)
    throw new ApiError(400, 'an operator token needs a scope: the one it manages beneath');
  if (input.role === 'client' && !input.scope)
    throw new ApiError(400, 'a client key needs a scope: the one whose models it calls');
  if (input.role === 'admin' && input.scope)
    throw new ApiError(400, 'an admin token takes no scope: it may do anything anywhere');
  if (input.role === 'metrics' && input.scope)
    throw new ApiError(400, 'a metrics token takes no scope: the metrics cover every tenant');
  if (input.models && input.role !== 'reporter')
    throw new ApiError(400, 'only a reporter token is limited to models');
  if (input.role === 'agent' && (!input.node || input.scope))
    throw new ApiError(400, 'an agent token needs a node and takes no scope: it acts for that node only');
  if (input.role === 'agent' && (!input.node_address || !input.node_bounds))
    throw new ApiError(
      400,
      "an agent token needs node_address and node_bounds: where its node's engines are reached and the most the node may declare",
    );
  if ((input.node || input.node_address || input.node_bounds) && input.role !== 'agent')
    throw new ApiError(400, 'only an agent token is bound to a node');
  if (input.expires_at && Date.parse(input.expires_at) <= now)
    throw new ApiError(400, `expires_at ${input.expires_at} is not in the future`);
}
