import type { Context, MiddlewareHandler } from 'hono';
import type { Sql } from '../../store/db.ts';
import { listScopes } from '../../store/tenancy.ts';
import { tokensByHashPrefix } from '../../store/tokens.ts';
import { errorBody } from '../http.ts';
import { type ScopeTree, scopeTree } from './guard.ts';
import { hashSecret, sameHash } from './secrets.ts';

/** `Bearer <token>` (RFC 6750: the scheme in any case, a token of b64token characters); bounded. */
const BEARER = /^Bearer +([\w\-.~+/]{1,512}=*) *$/i;

/**
 * Every /api/v1 request: finds the token of its `Authorization: Bearer` header (401 without a valid
 * one) and keeps its identity for the routes, whose permissions decide the rest. The store is asked
 * on every request, so a revoked token stops working at once on every API process.
 */
export function authenticate(sql: Sql, now: () => number): MiddlewareHandler {
  return async (c, next) => {
    const secret = BEARER.exec(c.req.header('authorization') ?? '')?.[1];
    if (!secret) return unauthorized(c, 'send the header Authorization: Bearer <token>');
    const hash = hashSecret(secret);
    const token = (await tokensByHashPrefix(sql, hash)).find((t) => sameHash(t.secret_sha256, hash));
    if (!token) return unauthorized(c, 'this one is unknown or was revoked');
    if (token.expires_at && Date.parse(token.expires_at) <= now()) {
      return unauthorized(c, `this one expired at ${token.expires_at}`);
    }
    c.set('identity', { name: token.name, role: token.role, scope: token.scope, models: token.models });
    let tree: Promise<ScopeTree> | undefined;
    c.set('scopeTree', () => {
      tree ??= listScopes(sql).then(scopeTree);
      return tree;
    });
    await next();
  };
}

const unauthorized = (c: Context, why: string) =>
  c.json(errorBody(`a valid bearer token is needed: ${why}`), 401, { 'www-authenticate': 'Bearer' });
