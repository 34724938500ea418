// Secrets from files (issue 30, LOW: secrets stayed in /proc/<pid>/environ, and --token put one in
// argv): NAME_FILE for every secret of the environment, --token-file for ctl and the agent, and the
// children llmgw starts see none of them, in their /proc/<pid>/environ either.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { childEnvironment, forgetSecrets, startService } from '../../../src/child-process.ts';
import { globalSettings } from '../../../src/cli/ctl/options.ts';
import { ConfigError, readConfig } from '../../../src/config.ts';
import { newSecret } from '../../../src/contracts/secrets.ts';
import { secretFromEnv } from '../../../src/secret-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'llmgw-secret-files-'));
const fileWith = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
};

describe('secrets from files', () => {
  it('reads LLMGW_ADMIN_TOKEN_FILE, LLMGW_METRICS_TOKEN_FILE and DATABASE_URL_FILE, blanks around dropped', () => {
    const admin = newSecret();
    const metrics = newSecret();
    const config = readConfig({
      LLMGW_ADMIN_TOKEN_FILE: fileWith('admin', `${admin}\n`),
      LLMGW_METRICS_TOKEN_FILE: fileWith('metrics', ` ${metrics} `),
      DATABASE_URL_FILE: fileWith('db', 'postgres://llmgw:s3cret@db/llmgw\n'),
    });
    assert.equal(config.adminToken, admin);
    assert.equal(config.metricsToken, metrics);
    assert.equal(config.databaseUrl, 'postgres://llmgw:s3cret@db/llmgw');
  });

  it('checks a secret from a file as one from the environment', () => {
    assert.throws(
      () => readConfig({ LLMGW_ADMIN_TOKEN_FILE: fileWith('weak', 'Password1234567890Password123456') }),
      (error: Error) =>
        error instanceof ConfigError && /^LLMGW_ADMIN_TOKEN is too easy to guess/.test(error.message),
    );
  });

  it('refuses both forms at once, a missing file and an empty one, in one sentence each', () => {
    const cases: [Record<string, string>, RegExp][] = [
      [
        { LLMGW_ADMIN_TOKEN: newSecret(), LLMGW_ADMIN_TOKEN_FILE: fileWith('a', newSecret()) },
        /^give LLMGW_ADMIN_TOKEN or LLMGW_ADMIN_TOKEN_FILE, not both$/,
      ],
      [{ LLMGW_ADMIN_TOKEN_FILE: join(dir, 'nope') }, /^LLMGW_ADMIN_TOKEN_FILE: cannot read .*nope: ENOENT$/],
      [{ DATABASE_URL_FILE: fileWith('empty', '\n') }, /^DATABASE_URL_FILE: .*empty is empty$/],
    ];
    for (const [env, sentence] of cases) {
      assert.throws(
        () => readConfig(env),
        (error: Error) => error instanceof ConfigError && sentence.test(error.message),
        JSON.stringify(env),
      );
    }
  });

  it('ctl takes --token-file and LLMGW_TOKEN_FILE; --token and --token-file together are refused', () => {
    const token = newSecret();
    const path = fileWith('ctl', `${token}\n`);
    const settings = (values: Record<string, string>, env: Record<string, string> = {}) =>
      globalSettings({ values, positionals: [] }, env, () => {});
    assert.equal(settings({ 'token-file': path }).token, token);
    assert.equal(settings({}, { LLMGW_TOKEN_FILE: path }).token, token);
    assert.equal(secretFromEnv({ LLMGW_TOKEN: 'x' }, 'LLMGW_TOKEN'), 'x');
    assert.throws(() => settings({ token, 'token-file': path }), /give --token or --token-file, not both/);
  });

  it("forgets the secrets and their files' names once read, and a child's /proc/<pid>/environ holds none", async () => {
    const admin = newSecret();
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      LLMGW_ADMIN_TOKEN: admin,
      LLMGW_METRICS_TOKEN_FILE: fileWith('m', newSecret()),
      DATABASE_URL: 'postgres://llmgw:s3cret@db/llmgw',
      LLMGW_TOKEN: 'an-agent-token',
    };
    forgetSecrets(env);
    assert.deepEqual(Object.keys(env).sort(), ['LLMGW_TOKEN', 'PATH']);
    const child = startService('sleep', ['30'], {
      stopSignal: 'SIGTERM',
      env: childEnvironment({}, { ...env, LLMGW_ADMIN_TOKEN: admin }),
    });
    try {
      await new Promise((resolve) => child.child.once('spawn', resolve));
      const environ = readFileSync(`/proc/${child.child.pid}/environ`, 'utf8');
      for (const word of [admin, 's3cret', 'an-agent-token', 'LLMGW_', 'DATABASE_URL']) {
        assert.ok(!environ.includes(word), `the child's environ holds ${word}`);
      }
    } finally {
      await child.stop();
    }
  });
});
