import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { childEnvironment, forgetSecrets } from '../../src/child-process.ts';

const PARENT = {
  PATH: '/usr/bin',
  HOME: '/home/me',
  TMPDIR: '/tmp',
  LANG: 'en_US.UTF-8',
  LC_ALL: 'C',
  LLMGW_ADMIN_TOKEN: 'admin-secret-0123456789abcdef0123456789',
  LLMGW_METRICS_TOKEN: 'metrics-secret-0123456789abcdef012345678',
  LLMGW_HOME: '/srv/llmgw',
  DATABASE_URL: 'postgres://llmgw:pw@db/llmgw',
  TEMPORAL_API_KEY: 'temporal-secret',
  AWS_SECRET_ACCESS_KEY: 'aws-secret',
  TEMPORAL_CLI: '/opt/temporal',
};

describe('the environment of a child process', () => {
  it('holds what a program needs to run and nothing of llmgw or the user besides', () => {
    assert.deepEqual(childEnvironment({}, PARENT), {
      PATH: '/usr/bin',
      HOME: '/home/me',
      TMPDIR: '/tmp',
      LANG: 'en_US.UTF-8',
      LC_ALL: 'C',
    });
  });

  it('lets through the variables a child needs, and sets its own', () => {
    const env = childEnvironment({ passes: /^TEMPORAL_CLI$/, set: { LC_MESSAGES: 'C' } }, PARENT);
    assert.equal(env.TEMPORAL_CLI, '/opt/temporal');
    assert.equal(env.LC_MESSAGES, 'C');
    assert.equal(env.TEMPORAL_API_KEY, undefined);
    assert.equal(env.LLMGW_ADMIN_TOKEN, undefined);
  });

  it('leaves out the secrets config has read once they are forgotten, and the rest stays', () => {
    const env: NodeJS.ProcessEnv = { ...PARENT };
    forgetSecrets(env);
    assert.equal(env.LLMGW_ADMIN_TOKEN, undefined);
    assert.equal(env.LLMGW_METRICS_TOKEN, undefined);
    assert.equal(env.DATABASE_URL, undefined);
    assert.equal(env.LLMGW_HOME, '/srv/llmgw');
  });
});
