// The forwarder's count of requests in flight (src/gateway/forwarder.ts): whatever happens to an attempt,
// its count ends, since a count left behind keeps a model from scaling down and skews the balance.
import assert from 'node:assert/strict';
import { EventEmitter, once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createNetServer } from 'node:net';
import { after, afterEach, describe, it, mock } from 'node:test';
import { Registry } from 'prom-client';
import { type GatewayConfig, readConfig } from '../../../src/config.ts';
import type { ClientAnswer } from '../../../src/gateway/client-answer.ts';
import { REFUSALS, type Refusal } from '../../../src/gateway/errors.ts';
import { Forwarder, leastInFlight } from '../../../src/gateway/forwarder.ts';
import { LoadReporter } from '../../../src/gateway/load-reporter.ts';
import { createGatewayMetrics } from '../../../src/gateway/metrics.ts';
import { ReplicaHealth } from '../../../src/gateway/replica-health.ts';
import type { Upstream } from '../../../src/gateway/routing-table.ts';
import { startClosingEngine } from '../../support/closing-engine.ts';

const servers: Server[] = [];
after(() => {
  for (const server of servers) server.closeAllConnections();
  for (const server of servers) server.close();
});

async function listen(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const server = createServer(handle);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A replica that answers `{"ok":"<id>"}`. */
const answering = (id: string) => listen((_req, res) => res.end(JSON.stringify({ ok: id })));

/** A replica that crashes during prefill, as vLLM does: headers flushed, then the connection reset. */
async function crashingAfterHeaders() {
  const crashing = { id: 'crashing', endpoint: '', requests: 0 };
  const url = await listen((_req, res) => {
    crashing.requests++;
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.flushHeaders();
    res.socket?.destroy();
  });
  crashing.endpoint = `${url}/v1`;
  return crashing;
}

/** A replica whose stream never ends; `open` counts the requests it still has. */
async function streamingForever() {
  const streaming = { id: 'streaming', endpoint: '', requests: 0, open: 0 };
  const url = await listen((_req, res) => {
    streaming.requests++;
    streaming.open++;
    res.once('close', () => streaming.open--);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {}\n\n');
  });
  streaming.endpoint = `${url}/v1`;
  return streaming;
}

/** A replica whose answers stream until `release()` ends the oldest; `open` counts those it still has. */
async function holding(id: string, slots: number) {
  const answers: ServerResponse[] = [];
  const replica = { id, endpoint: '', slots, requests: 0, most: 0, release: () => answers.shift()?.end() };
  const url = await listen((_req, res) => {
    replica.requests++;
    answers.push(res);
    replica.most = Math.max(replica.most, answers.length);
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    res.write('data: {}\n\n');
  });
  replica.endpoint = `${url}/v1`;
  return replica;
}

/** A forwarder as the gateway builds it, with its gauge of requests in flight. */
function setUp(
  replicasNow: (model: string) => readonly Upstream[] = () => [],
  overrides: Partial<GatewayConfig> = {},
) {
  const reporter = new LoadReporter(
    async () => undefined,
    { everyMs: 60_000, run: async () => {} },
    { warn() {} },
  );
  const metrics = createGatewayMetrics(
    {
      inFlight: () => reporter.inFlightCounts(),
      held: () => new Map(),
      oldestHeldSeconds: () => new Map(),
      replicas: () => [],
    },
    new Registry(),
  );
  const settings = { ...readConfig({}).gateway, ...overrides };
  const health = new ReplicaHealth(settings, async () => false);
  const forwarder = new Forwarder(health, reporter, metrics, replicasNow, settings, leastInFlight, {
    warn() {},
  });
  const inFlight = async () =>
    (await metrics.registry.getSingleMetric('llmgw_gateway_in_flight')!.get()).values.map((v) => v.value);
  const stop = () => {
    reporter.stop();
    health.stop();
  };
  return { forwarder, inFlight, stop, metrics, health, reporter };
}

/**
 * A gateway of just the forwarder: each request is forwarded to `replicas` once `ready` resolves;
 * `forwarded` holds each forward() under way.
 */
async function gatewayOf(
  forwarder: Forwarder,
  replicas: readonly Upstream[],
  ready: (res: ServerResponse) => Promise<void> = async () => {},
) {
  const forwarded: Promise<unknown>[] = [];
  const url = await listen(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    await ready(res);
    const body = Buffer.concat(chunks);
    const request = {
      model: 'm',
      path: '/chat/completions',
      body,
      client: res,
      arrivedAt: performance.now(),
      requestId: 'test',
    };
    forwarded.push(
      forwarder.forward(request, replicas).catch((refusal: Error) => res.writeHead(502).end(refusal.message)),
    );
  });
  return { url, forwarded };
}

/** Waits until `check` holds, up to two seconds, and says whether it did. */
async function eventually(check: () => Promise<boolean> | boolean): Promise<boolean> {
  const deadline = Date.now() + 2000;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}

const post = (url: string, signal?: AbortSignal) =>
  fetch(`${url}/v1/chat/completions`, { method: 'POST', body: '{"model":"m"}', signal });

describe('Forwarder', () => {
  afterEach(() => mock.restoreAll());

  it('a replica that resets after its headers is retried on another, and neither keeps a request in flight', async () => {
    const { forwarder, inFlight, stop } = setUp();
    const crashing = await crashingAfterHeaders();
    const good = { id: 'good', endpoint: `${await answering('good')}/v1` };
    const gateway = (await gatewayOf(forwarder, [crashing, good])).url;
    mock.method(Math, 'random', () => 0); // of replicas tied on requests in flight, the first: the crashing one
    const answer = await post(gateway);
    assert.deepEqual([answer.status, await answer.json()], [200, { ok: 'good' }]);
    assert.ok(
      await eventually(async () => (await inFlight()).every((count) => count === 0)),
      'in flight: none',
    );
    // Were the crashing replica still counted with a request, the next would go to the good one first.
    const again = await post(gateway);
    assert.deepEqual([again.status, await again.json()], [200, { ok: 'good' }]);
    assert.equal(crashing.requests, 2, 'the balance sees no request left on the crashing replica');
    stop();
  });

  it('a replica that sends no first byte within the first-byte timeout is given up on, the request answered by another, with its x-request-id passed on', async () => {
    const { forwarder, stop, metrics } = setUp(() => [], { firstByteTimeoutMs: 200 });
    const hung = { id: 'hung', endpoint: '', requests: 0 };
    hung.endpoint = `${await listen(() => {
      hung.requests++; // never answers, as a stopped engine
    })}/v1`;
    let seenId: string | undefined;
    const good = {
      id: 'good',
      endpoint: `${await listen((req, res) => {
        seenId = req.headers['x-request-id'] as string;
        res.end('{"ok":"good"}');
      })}/v1`,
    };
    const gateway = (await gatewayOf(forwarder, [hung, good])).url;
    mock.method(Math, 'random', () => 0); // the first of the tied replicas: the hung one
    const sentAt = performance.now();
    const answer = await post(gateway);
    assert.deepEqual([answer.status, await answer.json()], [200, { ok: 'good' }]);
    assert.equal(answer.headers.get('x-request-id'), 'test');
    assert.equal(seenId, 'test');
    assert.equal(hung.requests, 1);
    assert.ok(performance.now() - sentAt >= 200, 'it waited the timeout first');
    const errors = await metrics.registry.getSingleMetric('llmgw_gateway_replica_errors_total')!.get();
    assert.deepEqual(
      errors.values.map((v) => [v.labels.replica, v.labels.kind, v.value]),
      [['hung', 'first_byte_timeout', 1]],
    );
    stop();
  });

  it('an answer that does not begin within the request timeout is 504, and tried nowhere else', async () => {
    const { forwarder, stop } = setUp(() => [], { firstByteTimeoutMs: 5000, requestTimeoutMs: 150 });
    let requests = 0;
    const hung = { id: 'hung', endpoint: `${await listen(() => void requests++)}/v1` };
    const other = { id: 'other', endpoint: `${await listen(() => void requests++)}/v1` };
    const refusals: string[] = [];
    const url = await listen(async (req, res) => {
      req.resume();
      await new Promise((resolve) => req.once('end', resolve));
      const request = {
        model: 'm',
        path: '/chat/completions',
        body: Buffer.from('{}'),
        client: res,
        arrivedAt: performance.now(),
        requestId: 'r',
      };
      await forwarder.forward(request, [hung, other]).catch((refusal: Refusal) => {
        refusals.push(refusal.kind);
        res.writeHead(REFUSALS[refusal.kind].status).end();
      });
    });
    const answer = await post(url);
    assert.equal(answer.status, 504);
    assert.deepEqual(refusals, ['upstream_timeout']);
    assert.equal(requests, 1);
    stop();
  });

  it('a request lost on a kept-alive connection the replica closed is sent again on a new one, and the replica stays routable', async () => {
    const { forwarder, stop, metrics, health } = setUp();
    const closing = await startClosingEngine();
    after(() => closing.stop());
    const gateway = (await gatewayOf(forwarder, [{ id: 'closing', endpoint: `${closing.url}/v1` }])).url;
    // Back to back, so that each request after the first gets the pooled connection of the one before.
    for (let i = 0; i < 10; i++) {
      const answer = await post(gateway);
      assert.equal(answer.status, 200, await answer.clone().text());
      assert.match(await answer.text(), /\[DONE\]/);
    }
    assert.equal(closing.answered, 10);
    assert.ok(closing.dropped >= 1, 'the pool reused a connection the replica had closed');
    assert.ok(health.routable('closing'), 'a closed pooled connection is no failure of the replica');
    const retries = await metrics.registry
      .getSingleMetric('llmgw_gateway_stale_connection_retries_total')!
      .get();
    assert.equal(retries.values[0]?.value, closing.dropped);
    stop();
  });

  it('keeps each replica within its slots and holds the rest, in turn, for the next slot free on any replica', async () => {
    const a = await holding('a', 1);
    const b = await holding('b', 2);
    const { forwarder, stop, reporter } = setUp(() => [a, b]);
    const gateway = (await gatewayOf(forwarder, [a, b])).url;
    const answers = Array.from({ length: 5 }, (_, i) =>
      post(gateway).then(async (answer) => ({ i, text: await answer.text() })),
    );
    assert.ok(await eventually(() => a.requests + b.requests === 3), 'three slots, three requests sent');
    assert.deepEqual([a.requests, b.requests], [1, 2]);
    // The other two wait in the gateway, counted as waiting in the model's load.
    assert.deepEqual(forwarder.waitingCounts(), new Map([['m', 2]]));
    assert.deepEqual(reporter.inFlightCounts().get('m'), 3);
    a.release();
    assert.ok(await eventually(() => a.requests === 2), 'the slot freed on a goes to the first waiting');
    b.release();
    assert.ok(await eventually(() => b.requests === 3), 'and the next to b');
    assert.deepEqual(forwarder.waitingCounts(), new Map());
    for (let i = 0; i < 3; i++) {
      a.release();
      b.release();
    }
    assert.equal((await Promise.all(answers)).length, 5);
    assert.deepEqual([a.most, b.most], [1, 2], 'no replica ever had more than its slots');
    stop();
  });

  it("writes the events that one read of the replica's answer brings to the client corked, so that they leave in one write", async () => {
    const { forwarder, stop } = setUp();
    // A replica that writes a whole streamed answer at once, as an engine does a token's events and its end.
    const events = ['data: {"n":1}\n\n', 'data: {"n":2}\n\n', 'data: [DONE]\n\n'];
    const answer =
      'HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n' +
      events.map((event) => `${event.length.toString(16)}\r\n${event}\r\n`).join('') +
      '0\r\n\r\n';
    const replica = createNetServer((socket) => socket.once('data', () => socket.write(answer)));
    replica.listen(0, '127.0.0.1');
    await once(replica, 'listening');
    const { port } = replica.address() as AddressInfo;
    const client = new RecordingClient();
    const ended = once(client, 'ended');
    await forwarder.forward(
      {
        model: 'm',
        path: '/chat/completions',
        body: Buffer.from('{"model":"m","stream":true}'),
        client,
        arrivedAt: performance.now(),
        requestId: 'test',
      },
      [{ id: 'r', endpoint: `http://127.0.0.1:${port}/v1` }],
    );
    await ended;
    replica.close();
    stop();
    const writes = client.log.filter((entry) => entry.startsWith('write') || entry === 'end');
    assert.deepEqual(
      writes,
      [...events.map((event) => `write ${event.length}`), 'end'],
      client.log.join(', '),
    );
    // Every write and the end came while the client was corked, and every cork was undone.
    assert.ok(
      client.log.every((entry, at) => !writes.includes(entry) || client.corkedAt[at] > 0),
      client.log.join(', '),
    );
    assert.equal(client.corked, 0, 'as many uncorks as corks');
  });

  it('a client that left before its request was forwarded is not sent on, and counts nothing in flight', async () => {
    const { forwarder, inFlight, stop } = setUp();
    const streaming = await streamingForever();
    // Held until its client has gone, as a request may be while its key is read or its model scales from zero.
    const gone = (res: ServerResponse) => new Promise<void>((resolve) => res.once('close', resolve));
    const gateway = await gatewayOf(forwarder, [streaming], gone);
    const controller = new AbortController();
    const answer = post(gateway.url, controller.signal).catch(() => 'aborted');
    await new Promise((resolve) => setTimeout(resolve, 100));
    controller.abort();
    assert.equal(await answer, 'aborted');
    assert.ok(await eventually(() => gateway.forwarded.length === 1));
    await gateway.forwarded[0];
    assert.ok(await eventually(() => streaming.open === 0), 'the replica holds no request for it');
    assert.ok(
      await eventually(async () => (await inFlight()).every((count) => count === 0)),
      'in flight: none',
    );
    stop();
  });
});

/** A client's answer that logs what the gateway does with it, and how deep it was corked at each step. */
class RecordingClient extends EventEmitter implements ClientAnswer {
  destroyed = false;
  headersSent = false;
  writableFinished = false;
  corked = 0;
  readonly log: string[] = [];
  readonly corkedAt: number[] = [];

  private note(entry: string) {
    this.log.push(entry);
    this.corkedAt.push(this.corked);
  }
  writeHead(status: number) {
    this.headersSent = true;
    this.note(`head ${status}`);
  }
  write(chunk: Buffer | string) {
    this.note(`write ${chunk.length}`);
    return true;
  }
  end() {
    this.writableFinished = true;
    this.note('end');
    this.emit('ended');
  }
  destroy() {
    this.destroyed = true;
  }
  cork() {
    this.corked++;
  }
  uncork() {
    this.corked--;
  }
}
