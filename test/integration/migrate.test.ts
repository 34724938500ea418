import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { connect, type Sql } from '../../src/store/db.ts';
import { newId } from '../../src/store/ids.ts';
import { migrate } from '../../src/store/migrate.ts';
import { type Services, sharedServices } from '../support/services.ts';

describe('migrations', () => {
  let services: Services;
  let url: string;
  before(async () => {
    services = await sharedServices();
    const admin = connect(services.databaseUrl, { max: 1 });
    const database = `m_${newId()}`;
    await admin.unsafe(`create database ${database}`);
    await admin.end();
    const parsed = new URL(services.databaseUrl);
    parsed.pathname = `/${database}`;
    url = parsed.toString();
  });
  after(() => services.stop());

  it('two processes starting at once apply each migration exactly once', async () => {
    const clients: Sql[] = [connect(url), connect(url), connect(url)];
    const applied = await Promise.all(clients.map((sql) => migrate(sql)));
    const all = applied.flat();
    assert.ok(all.length > 0, 'the migrations ran');
    assert.equal(new Set(all).size, all.length, `each migration applied once: ${JSON.stringify(applied)}`);
    const [{ count }] = await clients[0]`select count(*)::int as count from schema_migrations`;
    assert.equal(count, all.length);
    assert.deepEqual(await migrate(clients[0]), [], 'a later start finds nothing to do');
    await Promise.all(clients.map((sql) => sql.end()));
  });
});
