import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stackEnvironment } from '../support/stack-environment.ts';

const SHELL = {
  PATH: '/usr/bin',
  HOME: '/home/me',
  XDG_CACHE_HOME: '/home/me/.cache',
  NODE_OPTIONS: '--max-old-space-size=4096',
  HTTPS_PROXY: 'http://proxy:3128',
  PORTS: 'not PORT',
  TEMPORAL_CLI: '/opt/temporal',
  LLMGW_ADMIN_TOKEN: 'from-the-shell',
  LLMGW_SIM_CLUSTER: '/etc/cluster.yaml',
  LLMGW_TEST_DATABASE_URL: 'postgres://harness',
  DATABASE_URL: 'postgres://elsewhere',
  TEMPORAL_ADDRESS: 'temporal:7233',
  TEMPORAL_NAMESPACE: 'prod',
  PORT: '8080',
};

describe('the environment of a stack the tests start', () => {
  it("keeps the caller's tools and basics, and none of its llmgw, Temporal, database or port settings", () => {
    assert.deepEqual(stackEnvironment({}, SHELL), {
      PATH: '/usr/bin',
      HOME: '/home/me',
      XDG_CACHE_HOME: '/home/me/.cache',
      NODE_OPTIONS: '--max-old-space-size=4096',
      HTTPS_PROXY: 'http://proxy:3128',
      PORTS: 'not PORT',
      TEMPORAL_CLI: '/opt/temporal',
    });
  });

  it("sets the test's own settings over anything", () => {
    const env = stackEnvironment({ PORT: '9090', LLMGW_HOME: '/tmp/x', PATH: '/bin' }, SHELL);
    assert.equal(env.PORT, '9090');
    assert.equal(env.LLMGW_HOME, '/tmp/x');
    assert.equal(env.PATH, '/bin');
    assert.equal(env.LLMGW_ADMIN_TOKEN, undefined);
  });
});
