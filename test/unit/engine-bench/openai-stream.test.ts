// `llmgw ctl bench`'s requests (src/engine-bench/openai-stream.ts, http-post.ts) against engines that close
// their kept-alive connections: one lost socket must not fail a level.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { missReason, summarizeLevel } from '../../../src/engine-bench/level.ts';
import { streamChat } from '../../../src/engine-bench/openai-stream.ts';
import { type ClosingEngine, startClosingEngine } from '../../support/closing-engine.ts';
import { closedPort } from '../../support/ports.ts';

describe('the bench on kept-alive connections', () => {
  let engine: ClosingEngine;
  before(async () => {
    engine = await startClosingEngine();
  });
  after(() => engine.stop());

  it('sends a request lost on a connection the engine closed once more on a new one: every request is measured', async () => {
    const target = { url: `${engine.url}/v1`, model: 'm', timeoutMs: 5000 };
    const samples = [];
    // Back to back, so that each request after the first is offered the pooled connection of the one before.
    for (let i = 0; i < 10; i++) samples.push(await streamChat(target, 'hi', 2));
    assert.deepEqual(
      samples.filter((sample) => !sample.ok),
      [],
    );
    assert.ok(engine.dropped >= 1, 'the pool reused a connection the engine had closed');
    assert.equal(engine.answered, 10);
    assert.ok(samples.every((sample) => sample.ok && sample.outputTokens === 2));
  });

  it('reports an endpoint it cannot reach apart from a failed answer, in the level and its reason', async () => {
    const target = { url: `http://127.0.0.1:${await closedPort()}/v1`, model: 'm', timeoutMs: 5000 };
    const sample = await streamChat(target, 'hi', 2);
    assert.deepEqual(sample, {
      ok: false,
      connection: true,
      error: 'could not reach the endpoint (ECONNREFUSED)',
    });
    const level = summarizeLevel(1, [sample, { ok: false, error: 'HTTP 500' }], 100);
    assert.equal(level.failed, 2);
    assert.equal(level.connection_errors, 1);
    assert.deepEqual(level.errors, ['could not reach the endpoint (ECONNREFUSED)', 'HTTP 500']);
    assert.equal(missReason(level, { ttft_p95_ms: 100 }), '1 of 2 requests failed');
    const unreached = summarizeLevel(1, [sample], 100);
    assert.equal(missReason(unreached, { ttft_p95_ms: 100 }), '1 of 1 requests could not reach the endpoint');
  });
});
