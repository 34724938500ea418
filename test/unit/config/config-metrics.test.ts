// What src/config.ts reads for the metrics token, the shared figures of GET /metrics and the worker's
// check of the reconcilers.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, readConfig } from '../../../src/config.ts';
import { newSecret } from '../../../src/contracts/secrets.ts';

const refusal = (message: string) => (error: Error) =>
  error instanceof ConfigError && error.message === message;

describe('configuration of metrics and the reconciler check', () => {
  it('takes a metrics token as strong as an admin token, and no other', () => {
    const secret = newSecret();
    assert.equal(readConfig({ LLMGW_METRICS_TOKEN: secret }).metricsToken, secret);
    assert.equal(readConfig({}).metricsToken, undefined);
    assert.throws(
      () => readConfig({ LLMGW_METRICS_TOKEN: 'short' }),
      refusal(
        'LLMGW_METRICS_TOKEN must be 32 to 512 letters, digits or "-._~+/"; make one with: openssl rand -base64 32',
      ),
    );
    assert.throws(
      () => readConfig({ LLMGW_METRICS_TOKEN: 'a'.repeat(40) }),
      /LLMGW_METRICS_TOKEN is too easy to guess/,
    );
  });

  it('refuses the admin token as the metrics token', () => {
    const secret = newSecret();
    assert.throws(
      () => readConfig({ LLMGW_ADMIN_TOKEN: secret, LLMGW_METRICS_TOKEN: secret }),
      refusal('LLMGW_METRICS_TOKEN must differ from LLMGW_ADMIN_TOKEN'),
    );
  });

  it('shares the figures 5 s and checks the reconcilers every minute unless told otherwise', () => {
    const defaults = readConfig({});
    assert.deepEqual([defaults.metricsRefreshMs, defaults.reconcilerCheckMs], [5000, 60_000]);
    const told = readConfig({ LLMGW_METRICS_REFRESH_S: '0', LLMGW_RECONCILER_CHECK_S: '0.5' });
    assert.deepEqual([told.metricsRefreshMs, told.reconcilerCheckMs], [0, 500]);
    assert.throws(
      () => readConfig({ LLMGW_RECONCILER_CHECK_S: '0' }),
      refusal('LLMGW_RECONCILER_CHECK_S=0 is not a number >= 0.1'),
    );
  });
});
