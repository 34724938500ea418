import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type SimEngine, startSimEngine } from '../../src/cluster/sim/engine.ts';
import { gpuNode, gpuProfile, ok } from '../support/cluster.ts';
import { type Stack, startStack } from '../support/stack.ts';

/**
 * The gateway in front of three engines of this test's own, registered as ready replicas (no worker:
 * nothing replaces them), so that one can be killed for real in the middle of 50 streams.
 */
describe('the gateway when a replica dies mid-stream', () => {
  let stack: Stack;
  let key: string;
  const engines = new Map<string, SimEngine>();

  before(async () => {
    stack = await startStack({ gateway: true, nodes: [gpuNode('gpu-1', 8)] });
    await ok(stack, 'PUT', '/api/v1/models/chat', {
      min_replicas: 0,
      max_replicas: 3,
      profiles: [gpuProfile('h100', 1)],
    });
    for (const id of ['chat-a', 'chat-b', 'chat-c']) {
      const engine = await startSimEngine({
        model: 'chat',
        maxBatch: 64,
        baseTpotMs: 20,
        tpotGrowthMs: 0,
        jitter: 0,
        seed: 1,
      });
      engines.set(id, engine);
      await stack.sql`
        insert into replicas (id, model, profile, node, resources, state, created_at, endpoint)
        values (${id}, 'chat', 'h100', 'gpu-1', ${stack.sql.json({ gpus: 1, cores: 4, memory_gib: 32 })},
          'ready', now(), ${`${engine.url}/v1`})`;
    }
    key = await stack.token({ name: 'app', role: 'admin' });
  });
  after(async () => {
    for (const engine of engines.values()) await engine.stop();
    await stack?.stop();
  });

  const stream = (maxTokens: number, signal?: AbortSignal) =>
    fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'chat',
        stream: true,
        max_tokens: maxTokens,
        messages: [{ role: 'user', content: 'hi' }],
      }),
      signal,
    });

  it('each of 50 streams completes or ends with an error event, none hangs, and new requests go to the others', async () => {
    // 50 streams of 100 tokens at 20 ms: about 2 s each, spread over the three replicas.
    const outcomes = Array.from({ length: 50 }, async () => {
      const answer = await stream(100, AbortSignal.timeout(20_000));
      assert.equal(answer.status, 200);
      const text = await answer.text();
      if (text.endsWith('data: [DONE]\n\n')) return 'completed';
      const last = text.trim().split('\n\n').at(-1)!;
      const event = JSON.parse(last.slice('data: '.length));
      assert.equal(event.error.code, 'upstream_failed', last);
      assert.match(event.error.message, /replica chat-b failed mid-answer/);
      return 'error event';
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    await engines.get('chat-b')!.stop();
    const seen = await Promise.all(outcomes);
    const count = (what: string) => seen.filter((s) => s === what).length;
    assert.equal(count('completed') + count('error event'), 50);
    // The fewest-in-flight balance gave the dead replica about a third of them.
    assert.ok(count('error event') >= 10 && count('error event') <= 24, JSON.stringify(seen));

    // The store still says chat-b is ready: the gateway tries it, fails over before the first byte, and
    // after 3 failures in a row stops sending it anything.
    const after = await Promise.all(Array.from({ length: 20 }, () => stream(3).then((r) => r.text())));
    assert.ok(
      after.every((text) => text.endsWith('data: [DONE]\n\n')),
      'every new request was answered',
    );
    const scrape = await (
      await fetch(`${stack.gatewayUrl}/metrics`, {
        headers: { authorization: `Bearer ${stack.metricsToken}` },
      })
    ).text();
    const failed = /llmgw_gateway_errors_total\{model="chat",kind="upstream_failed"\} (\d+)/.exec(scrape);
    assert.ok(Number(failed?.[1]) >= count('error event'), scrape);
    assert.doesNotMatch(
      scrape,
      /llmgw_gateway_in_flight\{model="chat"\}/,
      'nothing is left counted in flight',
    );
  });

  it('a client that goes away cancels its request on the replica', async () => {
    const controller = new AbortController();
    const answer = await stream(10_000, controller.signal);
    const reader = answer.body!.getReader();
    await reader.read();
    const running = async () => {
      let total = 0;
      for (const id of ['chat-a', 'chat-c']) {
        const text = await (await fetch(`${engines.get(id)!.url}/metrics`)).text();
        total += Number(/^vllm:num_requests_running\{[^}]*\} (\S+)$/m.exec(text)![1]);
      }
      return total;
    };
    assert.equal(await running(), 1);
    controller.abort();
    const deadline = Date.now() + 5000;
    while ((await running()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(await running(), 0, 'the replica no longer generates for a client that left');
  });

  it('a replica that starts draining gets no new requests', async () => {
    await stack.sql`update replicas set state = 'draining' where id = 'chat-a'`;
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the routing table reads every 500 ms
    const controller = new AbortController();
    const streams = await Promise.all(Array.from({ length: 6 }, () => stream(10_000, controller.signal)));
    const running = async (id: string) => {
      const text = await (await fetch(`${engines.get(id)!.url}/metrics`)).text();
      return Number(/^vllm:num_requests_running\{[^}]*\} (\S+)$/m.exec(text)![1]);
    };
    assert.deepEqual([await running('chat-a'), await running('chat-c')], [0, 6]);
    controller.abort();
    await Promise.all(streams.map((answer) => answer.body?.cancel().catch(() => {})));
  });
});
