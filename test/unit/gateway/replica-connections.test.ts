import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { type ExchangeHandler, ReplicaConnections } from '../../../src/gateway/replica-connections.ts';

/**
 * A replica that answers each request with the bytes `answer` gives, written in the pieces it gives
 * (the test's way of splitting an answer across reads), and counts its connections and requests.
 */
async function fakeReplica() {
  const state = {
    connections: 0,
    requests: [] as string[],
    sockets: [] as Socket[],
    answer: (_request: string): string[] => [
      'HTTP/1.1 200 OK\r\ncontent-type: text/plain\r\ncontent-length: 2\r\n\r\nok',
    ],
  };
  const server: Server = createServer((socket) => {
    state.connections++;
    state.sockets.push(socket);
    let received = '';
    socket.on('data', async (chunk: Buffer) => {
      received += chunk.toString('latin1');
      for (;;) {
        const headEnd = received.indexOf('\r\n\r\n');
        if (headEnd < 0) return;
        const length = Number(/content-length: (\d+)/.exec(received.slice(0, headEnd))?.[1] ?? 0);
        if (received.length < headEnd + 4 + length) return;
        const request = received.slice(0, headEnd + 4 + length);
        received = received.slice(request.length);
        state.requests.push(request);
        for (const piece of state.answer(request)) {
          if (piece === 'CLOSE') return void socket.destroy();
          socket.write(piece, 'latin1');
          await new Promise((resolve) => setImmediate(resolve));
        }
      }
    });
    socket.on('error', () => {});
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return { port, state, stop: () => server.close() };
}

interface Heard {
  status?: number;
  headers?: [string, string][];
  body: string;
  ended?: 'complete' | Error;
}

/**
 * Sends one request and collects what its handler heard, once the exchange is over. The handler keeps
 * the chunks it is given and reads them only then, as a client's socket may hold them past a read.
 */
function ask(pool: ReplicaConnections, port: number, fresh = false, body = '{"model":"m"}') {
  const heard: Heard = { body: '' };
  const chunks: Buffer[] = [];
  const over = new Promise<Heard>((resolve) => {
    const handler: ExchangeHandler = {
      onHeaders(status, headers) {
        heard.status = status;
        heard.headers = headers;
      },
      onData(chunk) {
        chunks.push(chunk);
        return true;
      },
      onComplete() {
        heard.ended = 'complete';
        heard.body = Buffer.concat(chunks).toString('latin1');
        resolve(heard);
      },
      onError(error) {
        heard.ended = error;
        heard.body = Buffer.concat(chunks).toString('latin1');
        resolve(heard);
      },
    };
    const request = {
      host: '127.0.0.1',
      port,
      path: '/v1/x',
      headers: 'x-request-id: r1\r\n',
      body: Buffer.from(body),
    };
    pool.send(request, handler, fresh);
  });
  return over;
}

/** An answer whose Keep-Alive says the replica closes a connection idle for `seconds`. */
const keptAlive = (seconds: number) => () => [
  `HTTP/1.1 200 OK\r\nkeep-alive: timeout=${seconds}\r\ncontent-length: 2\r\n\r\nok`,
];

/** Milliseconds from now until `event` happens. */
async function msUntil(event: Promise<unknown>): Promise<number> {
  const from = performance.now();
  await event;
  return performance.now() - from;
}

/** `body` as a chunked answer, its chunks of the sizes given. */
function chunked(body: string, sizes: number[]): string {
  let out = 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ncontent-type: text/event-stream\r\n\r\n';
  let at = 0;
  for (const size of sizes) {
    if (at >= body.length) break;
    const piece = body.slice(at, at + size);
    at += piece.length;
    out += `${piece.length.toString(16)};ext=1\r\n${piece}\r\n`;
  }
  if (at < body.length) out += `${(body.length - at).toString(16)}\r\n${body.slice(at)}\r\n`;
  return `${out}0\r\nx-trailer: t\r\n\r\n`;
}

/** `text` cut at the given points. */
function cut(text: string, points: number[]): string[] {
  const at = [...new Set(points.map((p) => p % (text.length + 1)))].sort((a, b) => a - b);
  const pieces: string[] = [];
  let from = 0;
  for (const point of at) {
    if (point > from) pieces.push(text.slice(from, point));
    from = Math.max(from, point);
  }
  pieces.push(text.slice(from));
  return pieces.filter((piece) => piece.length > 0);
}

describe("the gateway's connections to replicas", () => {
  let replica: Awaited<ReturnType<typeof fakeReplica>>;
  before(async () => {
    replica = await fakeReplica();
  });
  after(() => replica.stop());

  it('sends the request as one POST with Host, its headers and Content-Length, and reuses the connection', async () => {
    const pool = new ReplicaConnections();
    const connectionsBefore = replica.state.connections;
    for (let i = 0; i < 3; i++) {
      const heard = await ask(pool, replica.port);
      assert.equal(heard.ended, 'complete');
      assert.equal(heard.status, 200);
      assert.equal(heard.body, 'ok');
      assert.deepEqual(heard.headers, [
        ['content-type', 'text/plain'],
        ['content-length', '2'],
      ]);
    }
    assert.equal(replica.state.connections - connectionsBefore, 1);
    assert.equal(
      replica.state.requests.at(-1),
      `POST /v1/x HTTP/1.1\r\nhost: 127.0.0.1:${replica.port}\r\nx-request-id: r1\r\ncontent-length: 13\r\n\r\n{"model":"m"}`,
    );
  });

  it('reads any answer the same however its bytes are split: a length, chunks with extensions and trailers, 1xx first, or until close', async () => {
    const pool = new ReplicaConnections();
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 300 }).map((s) => s.replace(/[^\x20-\x7e]/g, 'x')),
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 }),
        fc.array(fc.nat(), { maxLength: 12 }),
        fc.constantFrom('length', 'chunked', 'continue', 'close'),
        async (body, sizes, points, framing) => {
          const answer =
            framing === 'length'
              ? `HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n${body}`
              : framing === 'chunked'
                ? chunked(body, sizes)
                : framing === 'continue'
                  ? `HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: ${body.length}\r\n\r\n${body}`
                  : `HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n${body}`;
          replica.state.answer = () => [...cut(answer, points), ...(framing === 'close' ? ['CLOSE'] : [])];
          const heard = await ask(pool, replica.port);
          assert.equal(heard.ended, 'complete');
          assert.equal(heard.status, framing === 'continue' ? 201 : 200);
          assert.equal(heard.body, body);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('says a pooled connection the replica closed before answering is UPSTREAM_CLOSED, and a refused one ECONNREFUSED', async () => {
    const pool = new ReplicaConnections();
    replica.state.answer = () => ['HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'];
    await ask(pool, replica.port);
    replica.state.answer = () => ['CLOSE'];
    const closed = await ask(pool, replica.port);
    assert.equal((closed.ended as { code?: string }).code, 'UPSTREAM_CLOSED');
    assert.equal(closed.status, undefined);
    const free = createServer();
    free.listen(0, '127.0.0.1');
    await once(free, 'listening');
    const { port } = free.address() as { port: number };
    free.close();
    const refused = await ask(pool, port);
    assert.equal((refused.ended as { code?: string }).code, 'ECONNREFUSED');
  });

  it('fails an answer cut short or malformed, and closes its connection', async () => {
    const pool = new ReplicaConnections();
    const cases: [string[], string][] = [
      [['HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\nok', 'CLOSE'], 'UPSTREAM_CLOSED'],
      [['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n'], 'UPSTREAM_MALFORMED'],
      [['HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n2\r\nokXX0\r\n\r\n'], 'UPSTREAM_MALFORMED'],
      [['SMTP ready\r\n\r\n'], 'UPSTREAM_MALFORMED'],
      [['HTTP/1.1 200 OK\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nok'], 'UPSTREAM_MALFORMED'],
    ];
    for (const [answer, code] of cases) {
      replica.state.answer = () => answer;
      const heard = await ask(pool, replica.port);
      assert.equal((heard.ended as { code?: string }).code, code, JSON.stringify(answer));
    }
  });

  it('does not reuse a connection the replica said to close, nor one made fresh', async () => {
    const pool = new ReplicaConnections();
    const before = replica.state.connections;
    replica.state.answer = () => ['HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 2\r\n\r\nok'];
    await ask(pool, replica.port);
    await ask(pool, replica.port);
    replica.state.answer = () => ['HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'];
    await ask(pool, replica.port, true);
    await ask(pool, replica.port, true);
    assert.equal(replica.state.connections - before, 4);
  });

  it("closes an idle connection a second before the replica's own Keep-Alive timeout, and reuses it until then", async () => {
    const pool = new ReplicaConnections();
    const before = replica.state.connections;
    replica.state.answer = keptAlive(2);
    await ask(pool, replica.port);
    const socket = replica.state.sockets.at(-1)!;
    const closed = once(socket, 'close');
    await ask(pool, replica.port);
    assert.equal(replica.state.connections - before, 1, 'the second request reused the connection');
    const idleMs = await msUntil(closed);
    // 1 s (2 s less a second), not the 4 s of a replica that says nothing; the slack is the timer's.
    assert.ok(idleMs > 800 && idleMs < 3000, `closed after ${idleMs.toFixed(0)} ms idle`);
    assert.equal((await ask(pool, replica.port)).ended, 'complete', 'a new connection after it');
  });

  it('keeps a connection that serves past its idle time, closes it that long after its last answer, and heeds a Keep-Alive that shrinks', async () => {
    const pool = new ReplicaConnections();
    const before = replica.state.connections;
    // timeout=2: idle 1 s. Requests every 300 ms for 1.8 s: the connection never idles a whole second.
    replica.state.answer = keptAlive(2);
    await ask(pool, replica.port);
    const socket = replica.state.sockets.at(-1)!;
    const closed = once(socket, 'close');
    for (let i = 0; i < 6; i++) {
      await new Promise((resolve) => setTimeout(resolve, 300));
      assert.equal((await ask(pool, replica.port)).ended, 'complete');
    }
    assert.equal(replica.state.connections - before, 1, 'every request on the one connection');
    const idleMs = await msUntil(closed);
    assert.ok(idleMs > 800 && idleMs < 2000, `closed ${idleMs.toFixed(0)} ms after its last answer`);

    // Idle 3 s (timeout=4) first, then 1 s (timeout=2): closed after 1 s, not the 3 s set before.
    replica.state.answer = keptAlive(4);
    await ask(pool, replica.port);
    const secondClosed = once(replica.state.sockets.at(-1)!, 'close');
    replica.state.answer = keptAlive(2);
    await ask(pool, replica.port);
    const shrunkMs = await msUntil(secondClosed);
    assert.ok(
      shrunkMs > 800 && shrunkMs < 2000,
      `closed ${shrunkMs.toFixed(0)} ms after the shorter Keep-Alive`,
    );
  });

  it('reads a chunk size of hex digits in either case, with blanks around them and extensions after, and refuses any other', async () => {
    const pool = new ReplicaConnections();
    const sized = (line: string) => [
      `HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n${line}\r\nabcdefghijklmnopqrstuvwxyz\r\n0\r\n\r\n`,
    ];
    const read: [string, string][] = [
      ['1a', '26 bytes'],
      ['1A', 'uppercase'],
      [' 1a\t', 'blanks around'],
      ['1a ; name=value', 'an extension after a blank'],
      ['00000000001a', '12 digits'],
    ];
    for (const [line, why] of read) {
      replica.state.answer = () => sized(line);
      const heard = await ask(pool, replica.port);
      assert.equal(heard.ended, 'complete', why);
      assert.equal(heard.body, 'abcdefghijklmnopqrstuvwxyz', why);
    }
    for (const line of ['', ' ', ';x', '0x1a', '1 a', '000000000001a', '-1', '1g']) {
      replica.state.answer = () => sized(line);
      const heard = await ask(pool, replica.port);
      assert.equal((heard.ended as { code?: string }).code, 'UPSTREAM_MALFORMED', JSON.stringify(line));
      assert.equal((heard.ended as Error).message, `a chunk size of "${line.split(';')[0].trim()}"`);
    }
  });

  it('pauses reading while the handler says so, and goes on at resume', async () => {
    const pool = new ReplicaConnections();
    const big = 'y'.repeat(4 * 1024 * 1024);
    replica.state.answer = () => [`HTTP/1.1 200 OK\r\ncontent-length: ${big.length}\r\n\r\n`, big];
    let received = 0;
    let resume: () => void = () => {};
    let pausedAt = -1;
    const done = new Promise<void>((resolve, reject) => {
      pool.send(
        { host: '127.0.0.1', port: replica.port, path: '/', headers: '', body: Buffer.alloc(0) },
        {
          onHeaders: (_status, _headers, resumeAnswer) => {
            resume = resumeAnswer;
          },
          onData: (chunk) => {
            received += chunk.length;
            if (pausedAt < 0) {
              pausedAt = received;
              return false;
            }
            return true;
          },
          onComplete: resolve,
          onError: reject,
        },
        false,
      );
    });
    while (pausedAt < 0) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 100));
    // Paused: no more than what was already read arrives while the handler waits.
    assert.ok(received < big.length, `${received} of ${big.length} arrived while paused`);
    resume();
    await done;
    assert.equal(received, big.length);
  });

  it('cancels nothing once its exchange is over: the kept connection may serve the next request', async () => {
    const pool = new ReplicaConnections();
    replica.state.answer = () => ['HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'];
    let cancelFirst: (why?: Error) => void = () => {};
    await new Promise<void>((resolve, reject) => {
      cancelFirst = pool.send(
        { host: '127.0.0.1', port: replica.port, path: '/', headers: '', body: Buffer.alloc(0) },
        { onHeaders() {}, onData: () => true, onComplete: resolve, onError: reject },
        false,
      );
    });
    replica.state.answer = () => [];
    const second = ask(pool, replica.port);
    cancelFirst(new Error('late'));
    replica.state.answer = () => ['HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok'];
    replica.state.sockets.at(-1)?.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
    assert.equal((await second).ended, 'complete');
  });

  it('cancels an exchange: the handler hears why, and the connection is closed', async () => {
    const pool = new ReplicaConnections();
    replica.state.answer = () => [];
    let heard: Error | undefined;
    const cancel = pool.send(
      { host: '127.0.0.1', port: replica.port, path: '/', headers: '', body: Buffer.alloc(0) },
      {
        onHeaders: () => assert.fail('no answer was sent'),
        onData: () => assert.fail('no answer was sent'),
        onComplete: () => assert.fail('no answer was sent'),
        onError: (error) => {
          heard = error;
        },
      },
      false,
    );
    while (replica.state.sockets.at(-1)?.readyState !== 'open') await new Promise((r) => setTimeout(r, 5));
    const socket = replica.state.sockets.at(-1)!;
    cancel(new Error('the client left'));
    assert.equal(heard?.message, 'the client left');
    await once(socket, 'close');
  });
});
