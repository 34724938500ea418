// `llmgw dev`'s arguments and LLMGW_TEST_TEMPORAL: which Temporal runs, and one sentence for anything else.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { devOptions, temporalKind } from '../../../src/cli/dev/options.ts';
import { temporalDatabaseUrl } from '../../../src/cli/dev/temporal-postgres-server.ts';
import { ConfigError } from '../../../src/config.ts';

describe("llmgw dev's options", () => {
  it('runs the dev server without a demo by default', () => {
    assert.deepEqual(devOptions([]), { demo: false, temporal: 'dev' });
  });

  it('takes --demo and --temporal in either spelling, in any order', () => {
    assert.deepEqual(devOptions(['--temporal', 'server', '--demo']), { demo: true, temporal: 'server' });
    assert.deepEqual(devOptions(['--demo', '--temporal=server']), { demo: true, temporal: 'server' });
    assert.deepEqual(devOptions(['--temporal', 'dev']), { demo: false, temporal: 'dev' });
  });

  it('refuses another Temporal, a missing value and an unknown option, each in one sentence', () => {
    assert.throws(
      () => devOptions(['--temporal', 'postgres']),
      new ConfigError(
        `--temporal takes dev (the Temporal CLI's dev server) or server (Temporal server on Postgres), not "postgres"`,
      ),
    );
    assert.throws(
      () => devOptions(['--temporal']),
      new ConfigError('--temporal needs a value: dev or server'),
    );
    assert.throws(
      () => devOptions(['--temporal=']),
      new ConfigError('--temporal needs a value: dev or server'),
    );
    assert.throws(
      () => devOptions(['--demo', '--fast']),
      new ConfigError('llmgw dev takes --demo and --temporal dev|server, not "--fast"'),
    );
  });
});

describe('LLMGW_TEST_TEMPORAL', () => {
  it('is the dev server when unset or empty, and names the variable when it names no Temporal', () => {
    assert.equal(temporalKind(undefined, 'LLMGW_TEST_TEMPORAL'), 'dev');
    assert.equal(temporalKind('', 'LLMGW_TEST_TEMPORAL'), 'dev');
    assert.equal(temporalKind('server', 'LLMGW_TEST_TEMPORAL'), 'server');
    assert.throws(
      () => temporalKind('Server', 'LLMGW_TEST_TEMPORAL'),
      (error) =>
        error instanceof ConfigError &&
        /^LLMGW_TEST_TEMPORAL takes dev .*, not "Server"$/.test(error.message),
    );
  });
});

describe("Temporal server's database", () => {
  it('is `temporal` on the Postgres and role of llmgw, with the password kept as encoded', () => {
    assert.equal(
      temporalDatabaseUrl('postgres://llmgw:p%40ss%2Fw0rd@127.0.0.1:5433/llmgw'),
      'postgres://llmgw:p%40ss%2Fw0rd@127.0.0.1:5433/temporal',
    );
    assert.equal(temporalDatabaseUrl('postgres://u@db.internal/app'), 'postgres://u@db.internal/temporal');
  });
});
