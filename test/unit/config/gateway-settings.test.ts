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

describe("the gateway's timeouts, retries, health checks and routing", () => {
  it('defaults to a 60 s first byte, 600 s answers, one retry, health probes every 5 s, and prefix routing', () => {
    const { gateway } = readConfig({});
    assert.equal(gateway.firstByteTimeoutMs, 60_000);
    assert.equal(gateway.requestTimeoutMs, 600_000);
    assert.equal(gateway.retries, 1);
    assert.equal(gateway.healthIntervalMs, 5000);
    assert.equal(gateway.maxBodyBytes, 8 * 1024 * 1024);
    assert.equal(gateway.routing, 'prefix');
    assert.equal(gateway.workers, 1);
  });

  it('takes each from its variable, and refuses what is out of range with the variable named', () => {
    const { gateway } = readConfig({
      LLMGW_GATEWAY_FIRST_BYTE_TIMEOUT_S: '1.5',
      LLMGW_GATEWAY_RETRIES: '0',
      LLMGW_GATEWAY_MAX_BODY_MIB: '1',
      LLMGW_GATEWAY_ROUTING: 'least-in-flight',
    });
    assert.deepEqual(
      [gateway.firstByteTimeoutMs, gateway.retries, gateway.maxBodyBytes, gateway.routing],
      [1500, 0, 1024 * 1024, 'least-in-flight'],
    );
    for (const [name, value] of [
      ['LLMGW_GATEWAY_FIRST_BYTE_TIMEOUT_S', '0'],
      ['LLMGW_GATEWAY_RETRIES', '1.5'],
      ['LLMGW_GATEWAY_EJECT_FAILURES', '0'],
      ['LLMGW_GATEWAY_LATENCY_OUTLIER', '1'],
      ['LLMGW_GATEWAY_ROUTING', 'random'],
    ]) {
      assert.throws(() => readConfig({ [name]: value }), new RegExp(name));
    }
  });
});
