import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { errorBody } from '../contracts/errors.ts';
import type { Identity } from '../contracts/permissions.ts';
import { hashSecret, sameHash } from '../contracts/secrets.ts';
import { SESSION_ID, sessionToken } from '../store/console-sessions.ts';
import type { Sql } from '../store/db.ts';
import { listScopes } from '../store/tenancy.ts';
import { tokensByHashPrefix } from '../store/tokens.ts';
import type { FailureThrottle } from './failure-throttle.ts';
import type { AuthFailures } from './failures.ts';
import { type ScopeTree, scopeTree } from './guard.ts';

/** `Bearer <token>` (RFC 6750: the scheme in any case, a token of b64token characters); bounded. */
const BEARER = /^Bearer +([\w\-.~+/]{1,512}=*) *$/i;

/**
 * Every /api/v1 request: finds the token of its `Authorization: Bearer` header (401 without a valid
 * one) and keeps its identity for the routes, whose permissions decide the rest. The store is asked
 * on every request, so a revoked token stops working at once on every API process. Each refusal is
 * counted and logged (failures.ts), and slowed per source address (failure-throttle.ts): past the
 * burst, 429 with Retry-After.
 */
export function authenticate(
  sql: Sql,
  now: () => number,
  failures: AuthFailures,
  throttle: FailureThrottle,
): MiddlewareHandler {
  return async (c, next) => {
    const address = sourceAddress(c);
    // A request made in-process (the console reading as its signed-in token) has no peer to slow.
    const peer = address !== UNKNOWN_ADDRESS;
    const wait = peer ? throttle.waitS(address, now()) : 0;
    if (wait > 0) {
      return c.json(
        errorBody(`too many failed authentications from ${address}; try again in ${wait} s`),
        429,
        { 'retry-after': String(wait) },
      );
    }
    const refuse = (why: string) => {
      if (peer) throttle.failed(address, now());
      return unauthorized(c, why);
    };
    const header = c.req.header('authorization');
    // The console reads in-process as a signed-in session (its cookie holds no token): never from a peer.
    const session = peer ? undefined : SESSION.exec(header ?? '')?.[1];
    const secret = bearerSecret(header);
    if (!secret && !session) {
      failures.refused(header === undefined ? 'missing' : 'malformed', address);
      return refuse('send the header Authorization: Bearer <token>');
    }
    const hash = secret ? hashSecret(secret) : await sessionToken(sql, session!, now());
    const found = hash ? await identifyHash(sql, hash, now()) : ({ refused: 'unknown' } as const);
    if ('refused' in found) {
      if (found.refused === 'unknown') failures.refused('unknown', address);
      else failures.expired(found.token, address);
      return refuse(UNKNOWN);
    }
    c.set('identity', found.identity);
    let tree: Promise<ScopeTree> | undefined;
    c.set('scopeTree', () => {
      tree ??= listScopes(sql).then(scopeTree);
      return tree;
    });
    await next();
  };
}

/**
 * The identity of a bearer secret, or why it has none. An expired token is refused as `expired` for the
 * log, and callers answer it as an unknown one, so that the answer does not tell that it existed.
 */
export const identify = (sql: Sql, secret: string, now: number) => identifyHash(sql, hashSecret(secret), now);

/** As identify, from the hash of the secret (a console session keeps only that). */
export async function identifyHash(
  sql: Sql,
  hash: Buffer,
  now: number,
): Promise<
  | { identity: Identity }
  | { refused: 'unknown' }
  | { refused: 'expired'; token: { name: string; expires_at: string } }
> {
  const token = (await tokensByHashPrefix(sql, hash)).find((t) => sameHash(t.secret_sha256, hash));
  if (!token) return { refused: 'unknown' };
  if (token.expires_at && Date.parse(token.expires_at) <= now) {
    return { refused: 'expired', token: { name: token.name, expires_at: token.expires_at } };
  }
  const identity: Identity = { name: token.name, role: token.role, scope: token.scope, models: token.models };
  if (!token.node) return { identity };
  return {
    identity: { ...identity, node: token.node, ...(token.node_grant && { nodeGrant: token.node_grant }) },
  };
}

/** `Session <id>`: a console session's ID, which the console sends in-process for its signed-in reader. */
const SESSION = new RegExp(`^Session (${SESSION_ID.source.slice(1, -1)})$`);

/** A bearer secret from an Authorization header, or undefined when it holds none. */
export const bearerSecret = (header: string | undefined) => BEARER.exec(header ?? '')?.[1];

const UNKNOWN = 'this one is unknown, was revoked or expired';

/** The peer of the connection (not a forwarded-for header, which anyone can write). */
export const sourceAddress = (c: Context): string =>
  (c.env?.incoming ? getConnInfo(c).remote.address : undefined) ?? UNKNOWN_ADDRESS;

const UNKNOWN_ADDRESS = 'an unknown address';

const unauthorized = (c: Context, why: string) =>
  c.json(errorBody(`a valid bearer token is needed: ${why}`), 401, { 'www-authenticate': 'Bearer' });
