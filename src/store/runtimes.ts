import type { Runtime, RuntimeSpec } from '../domain/runtime.ts';
import type { Db } from './db.ts';

type RuntimeRow = { name: string; spec: RuntimeSpec; updated_by: string; updated_at: Date };

const toRuntime = (row: RuntimeRow): Runtime => ({
  name: row.name,
  ...row.spec,
  updated_by: row.updated_by,
  updated_at: row.updated_at.toISOString(),
});

/**
 * The runtimes named (all without names), by name. `lock`: in a transaction, kept from deletion until it
 * commits (the lock a profile's foreign key would take).
 */
export async function listRuntimes(
  sql: Db,
  names?: readonly string[],
  options: { lock?: boolean } = {},
): Promise<Runtime[]> {
  if (names?.length === 0) return [];
  const rows = await sql<RuntimeRow[]>`
    select name, spec, updated_by, updated_at from runtimes
    ${names ? sql`where name in ${sql(names)}` : sql``} order by name
    ${options.lock ? sql`for key share` : sql``}`;
  return rows.map(toRuntime);
}

export async function getRuntime(sql: Db, name: string): Promise<Runtime | undefined> {
  return (await listRuntimes(sql, [name]))[0];
}

/** Creates or replaces a runtime; true when it is new. */
export async function putRuntime(sql: Db, name: string, spec: RuntimeSpec, by: string): Promise<boolean> {
  const [row] = await sql<{ created: boolean }[]>`
    insert into runtimes (name, spec, updated_by) values (${name}, ${sql.json(spec as never)}, ${by})
    on conflict (name) do update set spec = excluded.spec, updated_by = excluded.updated_by, updated_at = now()
    returning (xmax = 0) as created`;
  return row.created;
}

/** The models whose profiles name the runtime, by name. */
export async function modelsNaming(sql: Db, runtime: string): Promise<string[]> {
  const rows = await sql<{ model: string }[]>`
    select distinct model from profiles where runtime = ${runtime} order by model`;
  return rows.map((row) => row.model);
}

/**
 * Removes a runtime no profile names: 'missing', 'in-use' or 'removed'. Called in a transaction: the
 * row is locked first, so a profile naming it at once (its foreign key shares that lock) waits.
 */
export async function deleteRuntime(tx: Db, name: string): Promise<'missing' | 'in-use' | 'removed'> {
  if ((await tx`select name from runtimes where name = ${name} for update`).length === 0) return 'missing';
  if ((await modelsNaming(tx, name)).length > 0) return 'in-use';
  await tx`delete from runtimes where name = ${name}`;
  return 'removed';
}
