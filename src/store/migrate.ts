import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Sql, transaction } from './db.ts';
import { lockUntilCommit } from './locks.ts';

const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'migrations');

/** Applies the SQL files in migrations/ that have not run yet, under an advisory lock. */
export async function migrate(sql: Sql): Promise<string[]> {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((file) => file.endsWith('.sql'))
    .sort();
  return transaction(sql, async (tx) => {
    // Transaction-scoped: a second process starting at once waits here, then finds nothing to do.
    await lockUntilCommit(tx, 'migrations');
    await tx`create table if not exists schema_migrations (
      version text primary key, applied_at timestamptz not null default now())`;
    const done = new Set(
      (await tx`select version from schema_migrations`).map((row) => row.version as string),
    );
    const applied: string[] = [];
    for (const file of files.filter((f) => !done.has(f))) {
      await tx.unsafe(readFileSync(join(MIGRATIONS_DIR, file), 'utf8'));
      await tx`insert into schema_migrations (version) values (${file})`;
      applied.push(file);
    }
    return applied;
  });
}
