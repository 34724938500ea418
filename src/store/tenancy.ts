import { Conflict, InvalidInput, NotFound } from '../domain/errors.ts';
import { parseScopeKey, type Scope, type ScopeKey, type ScopeKind, scopeKey } from '../domain/scope.ts';
import { type Db, type Tx, transaction } from './db.ts';

const UNIQUE_VIOLATION = '23505';
const isUniqueViolation = (error: unknown) => (error as { code?: string }).code === UNIQUE_VIOLATION;
const FOREIGN_KEY_VIOLATION = '23503';
const isForeignKeyViolation = (error: unknown) => (error as { code?: string }).code === FOREIGN_KEY_VIOLATION;

/** Every scope of the tree, parents before children. */
export async function listScopes(sql: Db): Promise<Scope[]> {
  const rows = await sql<{ kind: ScopeKind; id: string; name: string; parent: string | null }[]>`
    select 'org' as kind, id, name, null as parent, created_at from orgs
    union all select 'team', id, name, 'org:' || org_id, created_at from teams
    union all select 'project', id, name, 'team:' || team_id, created_at from projects
    order by kind, created_at, id`;
  const order: Record<ScopeKind, number> = { org: 0, team: 1, project: 2 };
  return rows
    .map((row) => ({
      key: scopeKey(row.kind, row.id),
      kind: row.kind,
      id: row.id,
      name: row.name,
      parent: row.parent as ScopeKey | null,
    }))
    .sort((a, b) => order[a.kind] - order[b.kind]);
}

export async function getScope(sql: Db, key: ScopeKey): Promise<Scope | null> {
  return (await listScopes(sql)).find((scope) => scope.key === key) ?? null;
}

const TABLE = { org: 'orgs', team: 'teams', project: 'projects' } as const;
const PARENT_COLUMN = { org: null, team: 'org_id', project: 'team_id' } as const;

/**
 * Creates a scope under `parent` (none for an org); 409 when a sibling has the name, 400 when the parent
 * was deleted since it was resolved.
 */
export async function createScope(
  sql: Db,
  kind: ScopeKind,
  id: string,
  name: string,
  parentId: string | null,
): Promise<void> {
  const column = PARENT_COLUMN[kind];
  try {
    if (column === null) await sql`insert into orgs (id, name) values (${id}, ${name})`;
    else
      await sql`insert into ${sql(TABLE[kind])} (id, name, ${sql(column)}) values (${id}, ${name}, ${parentId})`;
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new Conflict(`there is already ${kind === 'org' ? 'an' : 'a'} ${kind} named "${name}" there`);
    }
    if (isForeignKeyViolation(error)) {
      throw new InvalidInput(
        `there is no ${kind === 'team' ? 'org' : 'team'} with ID "${parentId}" any more`,
      );
    }
    throw error;
  }
}

/** The answer (404) for a scope that does not exist, or that the caller may not know of. */
export const noSuchScope = (kind: ScopeKind, id: string) =>
  new NotFound(`there is no ${kind} with ID "${id}"`);

/** Deletes a scope that has no children, models or quota (else 409 saying which). */
export async function deleteScope(sql: Db, kind: ScopeKind, id: string): Promise<void> {
  const key = scopeKey(kind, id);
  await transaction(sql, async (tx) => {
    const [found] = await tx`select id from ${tx(TABLE[kind])} where id = ${id} for update`;
    if (!found) throw noSuchScope(kind, id);
    const children =
      kind === 'org'
        ? await tx`select 1 from teams where org_id = ${id} limit 1`
        : kind === 'team'
          ? await tx`select 1 from projects where team_id = ${id} limit 1`
          : [];
    if (children.length)
      throw new Conflict(`${key} still has ${kind === 'org' ? 'teams' : 'projects'}; delete them first`);
    const [model] = await tx`select name from models where owner = ${key} limit 1`;
    if (model)
      throw new Conflict(`${key} still owns model "${model.name}"; change its owner or delete it first`);
    const [quota] = await tx`select 1 from capacity_quotas where scope = ${key}`;
    if (quota) throw new Conflict(`${key} still has a quota; delete it first`);
    await tx`delete from ${tx(TABLE[kind])} where id = ${id}`;
  });
}

/** Keeps a scope from being deleted until the transaction ends; false when it is gone already. */
export async function lockScope(tx: Tx, key: ScopeKey): Promise<boolean> {
  const parsed = parseScopeKey(key);
  if (!parsed) return false;
  const rows = await tx`select 1 from ${tx(TABLE[parsed.kind])} where id = ${parsed.id} for share`;
  return rows.length > 0;
}
