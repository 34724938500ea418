// The first admin: LLMGW_ADMIN_TOKEN stored as `bootstrap` at each start (the same secret changes
// nothing, a new one replaces it), `llmgw dev`'s `admin` made only when no admin token works, and an
// LLMGW_ADMIN_TOKEN too short to be kept as a hash refused.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createFirstAdmin, refuseWithoutAdmin, storeBootstrapAdmin } from '../../src/auth/bootstrap.ts';
import { ConfigError, readConfig } from '../../src/config.ts';
import { newSecret } from '../../src/contracts/secrets.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('the first admin token', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  const works = async (secret: string) =>
    (await stack.call('GET', '/api/v1/orgs', undefined, { authorization: `Bearer ${secret}` })).status ===
    200;
  const recorded = async () =>
    (await stack.sql`select count(*)::int as n from audit_log where target = 'token:bootstrap'`)[0]
      .n as number;

  it('LLMGW_ADMIN_TOKEN is the admin token `bootstrap`; the same secret again changes nothing', async () => {
    assert.ok(await works(stack.adminToken));
    const before = await recorded();
    await storeBootstrapAdmin(stack.sql, stack.adminToken);
    assert.equal(await recorded(), before, 'nothing recorded for a start with the same secret');

    const next = newSecret();
    await storeBootstrapAdmin(stack.sql, next);
    assert.ok(await works(next));
    assert.equal(await works(stack.adminToken), false, 'the old secret no longer works');
    assert.equal(await recorded(), before + 1);
    await storeBootstrapAdmin(stack.sql, stack.adminToken);
    assert.ok(await works(stack.adminToken));
  });

  it('llmgw dev makes `admin` only while no admin token works', async () => {
    assert.equal(await createFirstAdmin(stack.sql), null, 'bootstrap is an admin already');
    await stack.sql`update api_tokens set expires_at = now() - interval '1 second' where role = 'admin'`;
    const secret = await createFirstAdmin(stack.sql);
    assert.match(secret ?? '', /^llmgw_[\w-]{43}$/);
    assert.ok(await works(secret as string));
    const [admin] = await stack.sql`select role, created_by from api_tokens where name = 'admin'`;
    assert.deepEqual({ ...admin }, { role: 'admin', created_by: 'llmgw dev' });
    assert.equal(await createFirstAdmin(stack.sql), null, 'and only once');
  });

  it('llmgw serve refuses to start without LLMGW_ADMIN_TOKEN only while no admin token works', async () => {
    await refuseWithoutAdmin(stack.sql, undefined); // an admin token made earlier (bootstrap, or through the API)
    await stack.sql`update api_tokens set expires_at = now() - interval '1 second' where role = 'admin'`;
    await assert.rejects(refuseWithoutAdmin(stack.sql, undefined), {
      message:
        'LLMGW_ADMIN_TOKEN is not set and the store holds no admin token, so no one could call the API; set it to a secret (openssl rand -base64 32) and start again',
    });
    await assert.rejects(refuseWithoutAdmin(stack.sql, undefined), ConfigError);
    await refuseWithoutAdmin(stack.sql, newSecret()); // stored as `bootstrap` by the start that follows
    await storeBootstrapAdmin(stack.sql, stack.adminToken);
    await refuseWithoutAdmin(stack.sql, undefined);
  });

  it('refuses an LLMGW_ADMIN_TOKEN too short (or with characters a bearer token cannot carry)', () => {
    for (const secret of ['admin', 'x'.repeat(31), `${'x'.repeat(40)} y`, `${'x'.repeat(40)}!`]) {
      assert.throws(() => readConfig({ LLMGW_ADMIN_TOKEN: secret }), ConfigError, secret);
    }
    const strong = newSecret();
    assert.equal(readConfig({ LLMGW_ADMIN_TOKEN: strong }).adminToken, strong);
  });
});
