// src/config.ts's one schema of the environment: each bad value refused in one sentence naming the
// variable (and its value, unless it is a secret), defaults where unset or empty.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ConfigError, readConfig } from '../../../src/config.ts';
import { DEFAULT_POLICY_SETTINGS } from '../../../src/domain/snapshot.ts';

const refused = (env: Record<string, string>) => {
  try {
    readConfig(env);
  } catch (error) {
    assert.ok(error instanceof ConfigError, String(error));
    return error.message;
  }
  assert.fail(`${JSON.stringify(env)} was taken`);
};

describe('the environment', () => {
  const SENTENCES: [Record<string, string>, string][] = [
    [{ PORT: '80.5' }, 'PORT=80.5 is not a whole number >= 1'],
    [{ LLMGW_GATEWAY_PORT: 'http' }, 'LLMGW_GATEWAY_PORT=http is not a whole number >= 1'],
    [{ LLMGW_RESYNC_S: '0' }, 'LLMGW_RESYNC_S=0 is not a number >= 0.1'],
    [{ LLMGW_DRAIN_GRACE_S: '-1' }, 'LLMGW_DRAIN_GRACE_S=-1 is not a number >= 0'],
    // A memory of no length would weigh every burst it saw by 0/0.
    [{ LLMGW_BURST_MEMORY_S: '0' }, 'LLMGW_BURST_MEMORY_S=0 is not a number >= 1'],
    [{ LLMGW_WORKFLOW_CACHE: '1' }, 'LLMGW_WORKFLOW_CACHE=1 is not a whole number >= 2'],
    [{ LLMGW_TRUST_PROXY: 'yes' }, 'LLMGW_TRUST_PROXY=yes must be 1 (on) or 0 (off)'],
    [{ LLMGW_TEMPORAL_UI_URL: 'ftp://x' }, 'LLMGW_TEMPORAL_UI_URL=ftp://x is not an http:// or https:// URL'],
    [
      { LLMGW_GATEWAY_INSTANCE: '-a' },
      'LLMGW_GATEWAY_INSTANCE=-a must be 1 to 80 letters, digits, ".", "_" or "-", starting with a letter or digit',
    ],
    [
      { LLMGW_TEMPORAL_KEY_FILE: '/nowhere/key' },
      'LLMGW_TEMPORAL_KEY_FILE=/nowhere/key cannot be read: ENOENT',
    ],
    [
      { LLMGW_ADMIN_TOKEN: 'not-a-good-secret' },
      'LLMGW_ADMIN_TOKEN must be 32 to 512 letters, digits or "-._~+/"; make one with: openssl rand -base64 32',
    ],
    [
      { LLMGW_ADMIN_TOKEN: 'x', LLMGW_ADMIN_TOKEN_FILE: '/f' },
      'give LLMGW_ADMIN_TOKEN or LLMGW_ADMIN_TOKEN_FILE, not both',
    ],
  ];
  for (const [env, sentence] of SENTENCES) {
    it(`refuses ${JSON.stringify(env)}: ${sentence}`, () => assert.equal(refused(env), sentence));
  }

  it('never shows a secret it refuses', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== ''),
        (secret) => {
          const message = refused({ LLMGW_METRICS_TOKEN: `${secret}!` });
          assert.ok(!message.includes(`${secret}!`), message);
        },
      ),
    );
  });

  it('refuses any number below its minimum, or not a number, in one sentence naming it', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.double({ max: -Number.MIN_VALUE, noNaN: true }),
          fc.constantFrom('x', '1e', 'NaN', 'Infinity'),
        ),
        (value) => {
          const text = String(value);
          assert.equal(
            refused({ LLMGW_GATEWAY_QUEUE_S: text }),
            `LLMGW_GATEWAY_QUEUE_S=${text} is not a number >= 0`,
          );
        },
      ),
    );
  });

  it("reads the policy's burst settings in seconds, as the policy's defaults where unset", () => {
    const { policy } = readConfig({ LLMGW_START_DELAY_S: '90', LLMGW_BURST_MEMORY_S: '600' });
    assert.equal(policy.startDelayMs, 90_000);
    assert.equal(policy.burstMemoryMs, 600_000);
    assert.deepEqual(
      [readConfig({}).policy.startDelayMs, readConfig({}).policy.burstMemoryMs],
      [DEFAULT_POLICY_SETTINGS.startDelayMs, DEFAULT_POLICY_SETTINGS.burstMemoryMs],
    );
  });

  it('takes the defaults where a variable is unset or empty', () => {
    assert.deepEqual(readConfig({ PORT: '', LLMGW_RESYNC_S: '', LLMGW_TRUST_PROXY: '' }), readConfig({}));
  });
});
