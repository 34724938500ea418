// Migration 016 (runtimes) on a store written before it: models keep their profiles' inline engines as
// they were, name no runtime, and are warned of (GET /api/v1/models/{name} `warnings`).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { inlineEngineWarnings } from '../../src/api/routes/models/engines.ts';
import { connect, type Sql } from '../../src/store/db.ts';
import { newId } from '../../src/store/ids.ts';
import { migrate } from '../../src/store/migrate.ts';
import { getModel } from '../../src/store/models.ts';
import { type Services, sharedServices } from '../support/services.ts';
import { createDatabase } from '../support/stack.ts';

const MIGRATIONS = join(import.meta.dirname, '..', '..', 'src', 'store', 'migrations');

describe('migration 016 on models stored before runtimes', () => {
  let services: Services;
  let sql: Sql;
  before(async () => {
    services = await sharedServices();
    sql = connect(await createDatabase(services.databaseUrl, `m_${newId()}`));
  });
  after(async () => {
    await sql?.end();
    await services.stop();
  });

  it('keeps each inline engine intact, and warns of it', async () => {
    // The store as the code before runtimes left it: every migration before 016, recorded as applied.
    await sql`create table schema_migrations (version text primary key, applied_at timestamptz not null default now())`;
    for (const file of readdirSync(MIGRATIONS)
      .filter((f) => f.endsWith('.sql') && f < '016')
      .sort()) {
      await sql.unsafe(readFileSync(join(MIGRATIONS, file), 'utf8'));
      await sql`insert into schema_migrations (version) values (${file})`;
    }
    const engine = { kind: 'command', argv: ['/opt/engine', '--port', '{port}'], env: { HF_TOKEN: 'hf_x' } };
    await sql`insert into models (name, min_replicas, max_replicas) values ('old', 0, 1)`;
    await sql`
      insert into profiles (model, name, priority, resources, engine, position)
      values ('old', 'h100', 0, ${sql.json({ gpus: 1 })}, ${sql.json(engine)}, 0)`;

    assert.ok((await migrate(sql)).includes('016_runtimes.sql'));
    const model = await getModel(sql, 'old');
    assert.deepEqual(model?.profiles, [{ name: 'h100', priority: 0, resources: { gpus: 1 }, engine }]);
    assert.deepEqual(inlineEngineWarnings(model?.profiles ?? []), [
      'profile "h100" runs an inline command engine, which only an admin may change; an admin may define a runtime for it and name that instead',
    ]);
  });
});
