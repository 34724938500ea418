// The gateway's settings as src/config.ts reads them: defaults as the docs give them, and refusals.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, readConfig } from '../../../src/config.ts';

describe("the gateway's settings", () => {
  it("listens on vLLM's 8000 and holds a request for a replica up to 120 s, by default", () => {
    const { gateway } = readConfig({});
    assert.equal(gateway.port, 8000);
    assert.equal(gateway.queueMs, 120_000);
  });

  it('takes LLMGW_GATEWAY_PORT and LLMGW_GATEWAY_QUEUE_S, and refuses what is not a port or a duration', () => {
    const { gateway } = readConfig({ LLMGW_GATEWAY_PORT: '9000', LLMGW_GATEWAY_QUEUE_S: '2.5' });
    assert.equal(gateway.port, 9000);
    assert.equal(gateway.queueMs, 2500);
    for (const env of [
      { LLMGW_GATEWAY_PORT: '0' },
      { LLMGW_GATEWAY_PORT: 'x' },
      { LLMGW_GATEWAY_QUEUE_S: '-1' },
    ]) {
      assert.throws(() => readConfig(env), ConfigError, JSON.stringify(env));
    }
  });
});
