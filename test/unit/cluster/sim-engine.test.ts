import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type SimEngine, simKnee, startSimEngine } from '../../../src/cluster/sim/engine.ts';
import { sseData } from '../../../src/engine-bench/sse.ts';

const chat = (engine: SimEngine, body: object, signal?: AbortSignal) =>
  fetch(`${engine.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'sim', messages: [{ role: 'user', content: 'two words' }], ...body }),
    signal,
  });

const gauges = async (engine: SimEngine) => {
  const text = await (await fetch(`${engine.url}/metrics`)).text();
  const value = (name: string) =>
    Number(new RegExp(`^${name}\\{model_name="sim"\\} (\\S+)$`, 'm').exec(text)?.[1]);
  return { running: value('vllm:num_requests_running'), waiting: value('vllm:num_requests_waiting'), text };
};

const until = async (what: string, check: () => Promise<boolean>) => {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  assert.fail(`timed out waiting for ${what}`);
};

describe('the simulated engine', () => {
  let engine: SimEngine;
  before(async () => {
    engine = await startSimEngine({ maxBatch: 2, baseTpotMs: 1, tpotGrowthMs: 0, jitter: 0.2, seed: 7 });
  });
  after(() => engine.stop());

  it('lists its model and answers its health check', async () => {
    const models = await (await fetch(`${engine.url}/v1/models`)).json();
    assert.equal(models.object, 'list');
    assert.equal(models.data[0].id, 'sim');
    assert.equal((await fetch(`${engine.url}/health`)).status, 200);
  });

  it('streams a chat completion as vLLM does: the role with the first token, max_tokens tokens, usage, [DONE]', async () => {
    const response = await chat(engine, {
      max_tokens: 5,
      stream: true,
      stream_options: { include_usage: true },
    });
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /text\/event-stream/);
    const events: string[] = [];
    for await (const data of sseData(response.body!)) events.push(data);
    assert.equal(events.at(-1), '[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e));
    assert.deepEqual(chunks[0].choices[0].delta, { role: 'assistant', content: '' });
    const contents = chunks
      .filter((c) => c.choices[0]?.delta?.content)
      .map((c) => c.choices[0].delta.content);
    assert.equal(contents.length, 5);
    assert.equal(chunks.at(-2).choices[0].finish_reason, 'length');
    assert.deepEqual(chunks.at(-1).usage, { prompt_tokens: 2, completion_tokens: 5, total_tokens: 7 });
    assert.ok(chunks.every((c) => c.object === 'chat.completion.chunk' && c.id === chunks[0].id));
  });

  it('answers a request that does not stream with the whole completion', async () => {
    const body = await (await chat(engine, { max_tokens: 3 })).json();
    assert.equal(body.object, 'chat.completion');
    assert.equal(body.choices[0].message.content, ' tok0 tok1 tok2');
    assert.equal(body.usage.completion_tokens, 3);
  });

  it('refuses a request without messages, in the OpenAI error shape', async () => {
    const response = await fetch(`${engine.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'sim' }),
    });
    assert.equal(response.status, 400);
    assert.equal((await response.json()).error.message, 'messages must be a non-empty array');
  });

  it('queues requests beyond its batch, shows them in vLLM gauges, and frees the slot of a client that leaves', async () => {
    const slow = { max_tokens: 400, stream: true };
    const first = new AbortController();
    const responses = [chat(engine, slow, first.signal), chat(engine, slow), chat(engine, slow)];
    await until('2 running and 1 waiting', async () => {
      const now = await gauges(engine);
      return now.running === 2 && now.waiting === 1;
    });
    assert.match((await gauges(engine)).text, /# TYPE vllm:num_requests_running gauge/);
    first.abort();
    await until('the waiting one to take the freed slot', async () => {
      const now = await gauges(engine);
      return now.running === 2 && now.waiting === 0;
    });
    await Promise.allSettled(responses.map(async (r) => (await r).body?.cancel()));
    await until('all slots free', async () => (await gauges(engine)).running === 0);
  });
});

describe('the knee of the simulated engine', () => {
  const model = { maxBatch: 16, baseTpotMs: 4, tpotGrowthMs: 2, prefillMsPerToken: 0.1, jitter: 0 };

  it('is the highest concurrency up to maxBatch whose TPOT and TTFT meet the SLO', () => {
    // TPOT(c) = 4 + 2 (c - 1): 12 at c = 5, 14 at c = 6.
    assert.equal(simKnee(model, { tpot_p95_ms: 13 }, 100), 5);
    // TTFT(c) = 0.1 * 100 + TPOT(c): 20 at c = 4, 22 at c = 5.
    assert.equal(simKnee(model, { ttft_p95_ms: 21, tpot_p95_ms: 13 }, 100), 4);
    assert.equal(simKnee(model, { tpot_p95_ms: 1000 }, 100), 16, 'never above maxBatch');
    assert.equal(simKnee(model, { tpot_p95_ms: 3 }, 100), 0);
  });

  it('refuses options that make no engine', async () => {
    await assert.rejects(
      startSimEngine({ maxBatch: 0, baseTpotMs: 1, tpotGrowthMs: 0, jitter: 2, seed: 1 }),
      /maxBatch must be a whole number >= 1; jitter must be between 0 and 1/,
    );
  });
});
