// The agent's readiness check (src/agent/readiness.ts): an engine is ready once /health or /v1/models
// answers 200; one that does not listen yet is not.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { answersReady, READY_POLL_MS, waitUntilReady } from '../../../src/agent/readiness.ts';
import { closedPort } from '../../support/ports.ts';

const servers: Server[] = [];
after(() => {
  for (const server of servers) server.close();
});

/** A server on a free port answering `status(path)`; `port` listens on that port instead, when given. */
async function serve(status: (path: string) => number, port = 0): Promise<string> {
  const server = createServer((req, res) => res.writeHead(status(req.url ?? '/')).end());
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('readiness', () => {
  it('an engine is ready when /health or else /v1/models answers 200, not otherwise', async () => {
    assert.equal(await answersReady(await serve(() => 200)), true);
    assert.equal(await answersReady(await serve((path) => (path === '/v1/models' ? 200 : 404))), true);
    assert.equal(await answersReady(await serve(() => 503)), false);
    assert.equal(await answersReady(`http://127.0.0.1:${await closedPort()}`), false);
  });

  it('a start sees its engine ready once it listens and answers', async () => {
    const port = await closedPort();
    setTimeout(() => serve(() => 200, port), 10 * READY_POLL_MS);
    const began = performance.now();
    assert.equal(await waitUntilReady(`http://127.0.0.1:${port}`, 5000, new Promise(() => {})), true);
    assert.ok(performance.now() - began >= 10 * READY_POLL_MS - 5);
  });

  it('stops waiting, not ready, once the engine is gone or the time is up', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    assert.equal(await waitUntilReady(url, 5000, Promise.resolve()), false);
    const began = performance.now();
    assert.equal(await waitUntilReady(url, 200, new Promise(() => {})), false);
    assert.ok(performance.now() - began < 1000);
  });
});
