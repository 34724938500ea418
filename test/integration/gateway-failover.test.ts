import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { type SimEngine, startSimEngine } from '../../src/cluster/sim/engine.ts';
import { readConfig } from '../../src/config.ts';
import { gpuNode, gpuProfile, ok, untilRouted } from '../support/cluster.ts';
import { closedPort } from '../support/ports.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

/** Registers a ready replica of `model` serving at `endpoint` (no worker: nothing replaces it). */
async function readyReplica(stack: Stack, id: string, model: string, endpoint: string) {
  await stack.sql`
    insert into replicas (id, model, profile, node, resources, state, created_at, endpoint)
    values (${id}, ${model}, 'h100', 'gpu-1', ${stack.sql.json({ gpus: 1, cores: 4, memory_gib: 32 })},
      'ready', now(), ${endpoint})`;
}

/** A model of up to three replicas of one GPU, none placed by llmgw. */
const FAILURES_TO_EJECT = readConfig({}).gateway.ejectFailures;

const putModel = (stack: Stack, name: string) =>
  ok(stack, 'PUT', `/api/v1/models/${name}`, {
    min_replicas: 0,
    max_replicas: 3,
    // Slots enough for every request of these tests at once: what they check is not the gateway's hold.
    profiles: [gpuProfile('h100', 1, { default_concurrency: 64 })],
  });

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
    await putModel(stack, 'chat');
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
      await readyReplica(stack, id, 'chat', `${engine.url}/v1`);
    }
    key = await stack.token({ name: 'app', role: 'admin' });
    await untilRouted(stack, key, 'chat', engines.size);
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
    // A second in: every stream has begun, even on a busy machine, and none has ended (each takes 2 s).
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await engines.get('chat-b')!.stop();
    const seen = await Promise.all(outcomes);
    const count = (what: string) => seen.filter((s) => s === what).length;
    assert.equal(count('completed') + count('error event'), 50);
    // The fewest-in-flight balance gave the dead replica about a third of them.
    assert.ok(count('error event') >= 10 && count('error event') <= 24, JSON.stringify(seen));

    // The store still says chat-b is ready, but each of its streams failed, more than 3 in a row: the
    // gateway sends it nothing until a health probe passes, so the others answer every new request.
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
    await new Promise((resolve) => setTimeout(resolve, 1000)); // the routing table reads it some ms after (notified)
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

/**
 * A replica of the test's own: answers `{"replica": id}` after `delayMs`, or 503 while `failing` (its
 * GET /health too); `requests` counts the requests it was sent, `served` those it answered with 200.
 */
async function testReplica(id: string, delayMs = 0) {
  const replica = {
    endpoint: '',
    requests: 0,
    served: 0,
    failing: false,
    server: undefined as Server | undefined,
  };
  replica.server = createServer((req, res) => {
    if (req.url === '/health') return void res.writeHead(replica.failing ? 503 : 200).end();
    replica.requests++;
    req.resume();
    req.once('end', () =>
      setTimeout(() => {
        if (replica.failing) return void res.writeHead(503).end('{"error": "failing"}');
        replica.served++;
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ replica: id }));
      }, delayMs),
    );
  });
  await new Promise<void>((resolve) => replica.server?.listen(0, '127.0.0.1', resolve));
  replica.endpoint = `http://127.0.0.1:${(replica.server.address() as AddressInfo).port}/v1`;
  return replica;
}

describe('the gateway when a replica fails before answering', () => {
  let stack: Stack;
  let key: string;
  const servers: Server[] = [];

  before(async () => {
    stack = await startStack({ gateway: true, nodes: [gpuNode('gpu-1', 8)] });
    key = await stack.token({ name: 'app', role: 'admin' });
  });
  after(async () => {
    await stack?.stop();
    for (const server of servers) {
      server.closeAllConnections();
      server.close();
    }
  });

  /** A model whose replicas are these test replicas, once the gateway routes to all of them. */
  async function modelOf(name: string, replicas: Record<string, string>) {
    await putModel(stack, name);
    for (const [id, endpoint] of Object.entries(replicas)) await readyReplica(stack, id, name, endpoint);
    await untilRouted(stack, key, name, Object.keys(replicas).length);
  }

  const call = async (model: string) => {
    const answer = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    });
    return { status: answer.status, body: await answer.json() };
  };

  it('a request to a replica that refuses connections is sent to another, and answered', async () => {
    const good = await testReplica('pair-good', 300);
    servers.push(good.server!);
    await modelOf('pair', {
      'pair-good': good.endpoint,
      'pair-refusing': `http://127.0.0.1:${await closedPort()}/v1`,
    });
    // Two at once: whichever replica the first goes to, the second goes to the one with fewer in flight,
    // so the refusing one is tried at least once, and fewer than 3 times (it stays routable).
    const answers = await Promise.all([call('pair'), call('pair')]);
    assert.deepEqual(answers, [
      { status: 200, body: { replica: 'pair-good' } },
      { status: 200, body: { replica: 'pair-good' } },
    ]);
    assert.equal(good.served, 2);
  });

  it(`a replica that failed ${FAILURES_TO_EJECT} times in a row gets no requests until its health probe passes, then gets them again`, async () => {
    const flaky = await testReplica('flaky');
    const steady = await testReplica('steady');
    servers.push(flaky.server!, steady.server!);
    await modelOf('eject', { flaky: flaky.endpoint, steady: steady.endpoint });
    flaky.failing = true;
    // One at a time: ties are broken at random, so about every other request goes to the flaky one.
    for (let i = 0; i < 100 && flaky.requests < FAILURES_TO_EJECT; i++) await call('eject');
    assert.equal(flaky.requests, FAILURES_TO_EJECT);
    for (let i = 0; i < 10; i++)
      assert.deepEqual(await call('eject'), { status: 200, body: { replica: 'steady' } });
    assert.equal(flaky.requests, FAILURES_TO_EJECT, 'the ejected replica got no request');

    flaky.failing = false; // its probe, every second, now passes
    await eventually(
      'the flaky replica to get requests again',
      async () => {
        await call('eject');
        return flaky.served > 0;
      },
      5000,
    );
  });
});
