import assert from 'node:assert/strict';
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { gpuNode, gpuProfile, ok, untilRouted } from '../support/cluster.ts';
import { type Stack, startStack } from '../support/stack.ts';

/** An upstream of the test's own, the model's one ready replica: it answers by the request's model. */
async function upstream(handlers: Record<string, (res: ServerResponse) => void>) {
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => handlers[JSON.parse(body).model](res));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('the gateway passes streams through as they come', () => {
  let stack: Stack;
  let server: Server;
  const written = { bytes: 0, done: false };
  const MB = 1024 * 1024;
  const TOTAL = 64 * MB;

  before(async () => {
    const events = (res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: {"n":1}\n\n');
      setTimeout(() => res.end('data: {"n":2}\n\ndata: [DONE]\n\n'), 400);
    };
    // Writes TOTAL bytes as fast as its socket takes them, and no faster.
    const flood = (res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = Buffer.alloc(64 * 1024, 'x');
      const more = () => {
        while (written.bytes < TOTAL) {
          written.bytes += chunk.length;
          if (!res.write(chunk)) return void res.once('drain', more);
        }
        written.done = true;
        res.end();
      };
      more();
    };
    const up = await upstream({ events, flood });
    server = up.server;
    stack = await startStack({ gateway: true, nodes: [gpuNode('gpu-1', 8)] });
    for (const [index, model] of ['events', 'flood'].entries()) {
      await ok(stack, 'PUT', `/api/v1/models/${model}`, {
        max_replicas: 1,
        profiles: [gpuProfile('h100', 1)],
      });
      await stack.sql`
        insert into replicas (id, model, profile, node, resources, state, created_at, endpoint)
        values (${`r-${index}`}, ${model}, 'h100', 'gpu-1', ${stack.sql.json({ gpus: 1, cores: 4, memory_gib: 32 })},
          'ready', now(), ${`${up.url}/v1`})`;
      await untilRouted(stack, stack.adminToken, model, 1);
    }
  });
  after(async () => {
    server?.closeAllConnections();
    server?.close();
    await stack?.stop();
  });

  /** A streamed request through the gateway, as the raw response (so that the test decides when to read). */
  const stream = (model: string) =>
    new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      const sent = request(`${stack.gatewayUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${stack.adminToken}`, 'content-type': 'application/json' },
      });
      sent.on('response', resolve).on('error', reject);
      sent.end(JSON.stringify({ model, stream: true, messages: [] }));
    });

  it('an event reaches the client before the replica sends the next', async () => {
    const started = Date.now();
    const answer = await stream('events');
    const arrivals: [number, string][] = [];
    for await (const chunk of answer) arrivals.push([Date.now() - started, String(chunk)]);
    assert.match(arrivals[0][1], /"n":1/);
    assert.ok(arrivals[0][0] < 300, `the first event came at ${arrivals[0][0]} ms, not with the last`);
    assert.match(arrivals.at(-1)![1], /\[DONE\]/);
    assert.ok(arrivals.at(-1)![0] >= 400);
  });

  it('a client that stops reading stops the replica: nothing piles up in the gateway', async () => {
    const answer = await stream('flood');
    answer.pause();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    // Socket buffers on the way hold a few MB; a gateway that buffered would have taken all 64.
    assert.ok(
      written.bytes < 16 * MB,
      `the replica wrote ${written.bytes / MB} MB to a client reading nothing`,
    );
    assert.equal(written.done, false);
    let received = 0;
    answer.on('data', (chunk: Buffer) => {
      received += chunk.length;
    });
    answer.resume();
    await new Promise((resolve) => answer.once('end', resolve));
    assert.equal(received, TOTAL, 'once read, every byte arrives');
  });
});
