import { Conflict } from '../domain/errors.ts';
import type { NodeBounds, NodeGrant } from '../domain/node-grant.ts';
import type { Role } from '../domain/roles.ts';
import type { ScopeKey } from '../domain/scope.ts';
import type { Db } from './db.ts';

/** What a token may do, as it is made. */
export interface TokenGrant {
  name: string;
  role: Role;
  scope: ScopeKey | null;
  models: string[] | null;
  /** An agent's node (the only role bound to one); absent or null for the others. */
  node?: string | null;
  /** An agent's node's address and bounds; absent on agent tokens made before they existed (017). */
  node_grant?: NodeGrant;
  expires_at: string | null;
}

/** A token as it is listed: never its secret nor its hash. */
export interface StoredToken extends TokenGrant {
  created_by: string;
  created_at: string;
}

type TokenRow = Omit<StoredToken, 'created_at' | 'expires_at' | 'node_grant'> & {
  node_address: string | null;
  node_bounds: NodeBounds | null;
  created_at: Date;
  expires_at: Date | null;
  secret_sha256: Buffer;
};

const toToken = (row: TokenRow): StoredToken => ({
  name: row.name,
  role: row.role,
  scope: row.scope,
  models: row.models,
  node: row.node ?? null,
  ...(row.node_address &&
    row.node_bounds && { node_grant: { address: row.node_address, bounds: row.node_bounds } }),
  expires_at: row.expires_at?.toISOString() ?? null,
  created_by: row.created_by,
  created_at: row.created_at.toISOString(),
});

/**
 * A request's token is looked up by the first bytes of its hash (migration 002 indexes them); the API
 * then compares the whole hash in constant time, so no comparison that takes longer the more of a
 * stored hash a guess matches ever runs on a whole hash.
 */
const LOOKUP_BYTES = 8;

const COLUMNS =
  'name, role, scope, models, node, node_address, node_bounds, created_by, created_at, expires_at';

export async function listTokens(db: Db): Promise<StoredToken[]> {
  const rows = await db<TokenRow[]>`select ${db.unsafe(COLUMNS)} from api_tokens order by name`;
  return rows.map(toToken);
}

export async function getToken(db: Db, name: string): Promise<StoredToken | null> {
  const [row] = await db<TokenRow[]>`select ${db.unsafe(COLUMNS)} from api_tokens where name = ${name}`;
  return row ? toToken(row) : null;
}

/**
 * Stores a token by its secret's hash. `replace` overwrites a token of that name (the bootstrap admin
 * token, whose secret the environment may change between starts); otherwise the name taken is a 409.
 */
export async function putToken(
  db: Db,
  grant: TokenGrant,
  hash: Buffer,
  createdBy: string,
  { replace = false } = {},
): Promise<void> {
  const rows = await db`
    insert into api_tokens (name, role, scope, models, node, node_address, node_bounds, secret_sha256,
      created_by, expires_at)
    values (${grant.name}, ${grant.role}, ${grant.scope}, ${grant.models}, ${grant.node ?? null},
      ${grant.node_grant?.address ?? null}, ${grant.node_grant ? db.json(grant.node_grant.bounds as never) : null}, ${hash},
      ${createdBy}, ${grant.expires_at})
    on conflict (name) do ${
      replace
        ? db`update set role = excluded.role, scope = excluded.scope, models = excluded.models, node = excluded.node,
            node_address = excluded.node_address, node_bounds = excluded.node_bounds,
            secret_sha256 = excluded.secret_sha256, created_by = excluded.created_by,
            created_at = now(), expires_at = excluded.expires_at`
        : db`nothing`
    }
    returning name`;
  if (rows.length === 0) throw new Conflict(`there is already a token named "${grant.name}"`);
}

/** Revokes a token: it is gone at once for every API process; false when there is none of that name. */
export async function deleteToken(db: Db, name: string): Promise<boolean> {
  return (await db`delete from api_tokens where name = ${name} returning name`).length > 0;
}

/** Tokens whose secret's hash starts like this one; the caller compares the whole hash. */
export async function tokensByHashPrefix(
  db: Db,
  hash: Buffer,
): Promise<(StoredToken & { secret_sha256: Buffer })[]> {
  const rows = await db<TokenRow[]>`
    select ${db.unsafe(COLUMNS)}, secret_sha256 from api_tokens
    where substring(secret_sha256 from 1 for ${LOOKUP_BYTES}) = ${hash.subarray(0, LOOKUP_BYTES)}`;
  return rows.map((row) => ({ ...toToken(row), secret_sha256: row.secret_sha256 }));
}

/** Whether some admin token lets anyone in now. */
export async function hasLiveAdmin(db: Db): Promise<boolean> {
  const rows = await db`
    select 1 from api_tokens where role = 'admin' and (expires_at is null or expires_at > now()) limit 1`;
  return rows.length > 0;
}
