import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerOptions } from 'node:http';
import { connect, Socket } from 'node:net';
import { after, before, describe, it, mock } from 'node:test';
import fc from 'fast-check';
import type { ClientAnswer, ClientRequestHead } from '../../../src/gateway/client-answer.ts';
import { createFront, readHead } from '../../../src/gateway/http1-front.ts';

const MAX_BODY = 1024;

/**
 * A front on a free port: POST /fast is the front's (answered by `answerWith`, default an echo of the
 * body with its length), anything else node:http's fallback, which answers `fallback <method> <url>`.
 */
async function startFront(fallbackOptions: ServerOptions = {}) {
  const served: { head: ClientRequestHead; body: string; answer: ClientAnswer }[] = [];
  const fellBack: IncomingMessage[] = [];
  const state = {
    answerWith: (_head: ClientRequestHead, body: Buffer, answer: ClientAnswer) => {
      answer.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(body.length) });
      answer.end(body);
    },
  };
  const fallback = createServer(fallbackOptions, (incoming, res) => {
    fellBack.push(incoming);
    incoming.resume();
    incoming.once('end', () => res.end(`fallback ${incoming.method} ${incoming.url}`));
  });
  const front = createFront({
    routeOf: (method, url) => (method === 'POST' && url === '/fast' ? 'fast' : undefined),
    serve: (_route, head, body, answer) => {
      served.push({ head, body: body.toString(), answer });
      state.answerWith(head, body, answer);
    },
    fallback,
    maxBodyBytes: MAX_BODY,
  });
  front.server.listen(0, '127.0.0.1');
  await once(front.server, 'listening');
  const { port } = front.server.address() as { port: number };
  return {
    port,
    served,
    fellBack,
    state,
    stop: () => {
      front.closeAllConnections();
      front.server.close();
    },
  };
}

/** A raw connection: what it sends, and every byte it got. */
async function rawClient(port: number) {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  let received = '';
  socket.on('data', (chunk: Buffer) => {
    received += chunk.toString('latin1');
  });
  return {
    socket,
    received: () => received,
    /** Waits until what was received matches `pattern` (or the socket closed). */
    async until(pattern: RegExp): Promise<void> {
      while (!pattern.test(received) && !socket.destroyed && !socket.readableEnded) {
        await Promise.race([once(socket, 'data'), once(socket, 'close')]);
      }
    },
    /** Waits until what was received holds `count` whole answers (or the socket closed). */
    async answers(count: number): Promise<string[]> {
      for (;;) {
        const answers = splitAnswers(received);
        if (answers.length >= count || socket.destroyed || socket.readableEnded) return answers;
        await Promise.race([once(socket, 'data'), once(socket, 'close')]);
      }
    },
  };
}

/** Whole answers in `text`, each its head and body (a length given or chunked). */
function splitAnswers(text: string): string[] {
  const answers: string[] = [];
  let rest = text;
  for (;;) {
    const headEnd = rest.indexOf('\r\n\r\n');
    if (headEnd < 0) return answers;
    const head = rest.slice(0, headEnd);
    let end = -1;
    const length = /\r\ncontent-length: (\d+)/i.exec(head);
    if (length) end = headEnd + 4 + Number(length[1]);
    else if (/\r\ntransfer-encoding: chunked/i.test(head)) {
      const last = rest.indexOf('\r\n0\r\n\r\n', headEnd);
      const empty = rest.startsWith('0\r\n\r\n', headEnd + 4) ? headEnd + 4 + 5 : -1;
      end = empty >= 0 ? empty : last >= 0 ? last + 7 : -1;
    }
    if (end < 0 || rest.length < end) return answers;
    answers.push(rest.slice(0, end));
    rest = rest.slice(end);
  }
}

const post = (body: string, headers = '') =>
  `POST /fast HTTP/1.1\r\nhost: x\r\ncontent-length: ${Buffer.byteLength(body)}\r\n${headers}\r\n${body}`;

describe("the gateway's HTTP/1.1 front", () => {
  let front: Awaited<ReturnType<typeof startFront>>;
  before(async () => {
    front = await startFront();
  });
  after(() => front.stop());

  it('serves several requests on one kept-alive connection itself, in order, pipelined ones too', async () => {
    const client = await rawClient(front.port);
    const before = front.served.length;
    client.socket.write(post('one'));
    assert.equal((await client.answers(1)).length, 1);
    client.socket.write(post('two') + post('three', 'x-request-id: r3\r\n'));
    const answers = await client.answers(3);
    client.socket.destroy();
    assert.deepEqual(
      answers.map((answer) => answer.split('\r\n\r\n')[1]),
      ['one', 'two', 'three'],
    );
    assert.match(answers[0], /^HTTP\/1\.1 200 OK\r\n/);
    assert.match(answers[0], /\r\nkeep-alive: timeout=5\r\n/);
    assert.deepEqual(
      front.served.slice(before).map((s) => [s.body, s.head.requestId]),
      [
        ['one', undefined],
        ['two', undefined],
        ['three', 'r3'],
      ],
    );
    assert.equal(front.fellBack.length, 0);
  });

  it('serves none of the requests pipelined after one that asks to close, even when its answer ends at once', async () => {
    const client = await rawClient(front.port);
    const before = front.served.length;
    // The test's answers are written within serve, as the gateway's refusals of a request are.
    client.socket.write(post('one', 'connection: close\r\n') + post('two'));
    await once(client.socket, 'close');
    assert.deepEqual(
      splitAnswers(client.received()).map((answer) => answer.split('\r\n\r\n')[1]),
      ['one'],
    );
    assert.deepEqual(
      front.served.slice(before).map((s) => s.body),
      ['one'],
    );
  });

  it('closes a connection idle for the 5 s its answers name, from its last answer on, and not while it serves', async () => {
    const client = await rawClient(front.port);
    const closed = once(client.socket, 'close');
    // Busy for 4 s: an answer every second, each moving the idle time on.
    for (let i = 0; i < 4; i++) {
      client.socket.write(post(`${i}`));
      await client.answers(i + 1);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    const lastAnswerAt = performance.now() - 1000;
    const gaveUp = new Promise((resolve) => setTimeout(resolve, 7000, 'open'));
    assert.equal(await Promise.race([closed.then(() => 'closed'), gaveUp]), 'closed', 'still open after 7 s');
    const idle = performance.now() - lastAnswerAt;
    assert.equal(splitAnswers(client.received()).length, 4);
    assert.ok(idle >= 4990 && idle < 5500, `closed after ${idle} ms idle, not 5 s`);
  });

  it('gives the connection to node:http at the first request it does not serve, and node:http keeps it', async () => {
    const client = await rawClient(front.port);
    const served = front.served.length;
    const fellBack = front.fellBack.length;
    client.socket.write(post('mine'));
    await client.answers(1);
    client.socket.write('GET /metrics HTTP/1.1\r\nhost: x\r\n\r\n');
    await client.answers(2);
    client.socket.write(post('then node'));
    const answers = await client.answers(3);
    client.socket.destroy();
    assert.equal(answers[0].split('\r\n\r\n')[1], 'mine');
    assert.equal(answers[1].split('\r\n\r\n')[1], 'fallback GET /metrics');
    assert.equal(answers[2].split('\r\n\r\n')[1], 'fallback POST /fast');
    assert.equal(front.served.length - served, 1);
    assert.equal(front.fellBack.length - fellBack, 2);
  });

  const handedOver: [string, string, RegExp][] = [
    [
      'a chunked body',
      'POST /fast HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\n\r\n',
      /^HTTP\/1\.1 200/,
    ],
    [
      'Expect: 100-continue',
      'POST /fast HTTP/1.1\r\nhost: x\r\nexpect: 100-continue\r\ncontent-length: 2\r\n\r\nhi',
      /^HTTP\/1\.1 100 Continue/,
    ],
    ['HTTP/1.0', 'POST /fast HTTP/1.0\r\nhost: x\r\ncontent-length: 2\r\n\r\nhi', /^HTTP\/1\.1 200/],
    [
      'no Host (node:http answers 400)',
      'POST /fast HTTP/1.1\r\ncontent-length: 2\r\n\r\nhi',
      /^HTTP\/1\.1 400/,
    ],
    [
      'a body over the limit',
      `POST /fast HTTP/1.1\r\nhost: x\r\ncontent-length: ${MAX_BODY + 1}\r\n\r\n${'a'.repeat(MAX_BODY + 1)}`,
      /^HTTP\/1\.1 200/,
    ],
    [
      'a folded header (400)',
      'POST /fast HTTP/1.1\r\nhost: x\r\nx-a: 1\r\n  folded\r\ncontent-length: 2\r\n\r\nhi',
      /^HTTP\/1\.1 400/,
    ],
    [
      'two Content-Lengths (400)',
      'POST /fast HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\ncontent-length: 3\r\n\r\nhi',
      /^HTTP\/1\.1 400/,
    ],
    [
      'a Content-Length not a number (400)',
      'POST /fast HTTP/1.1\r\nhost: x\r\ncontent-length: 2x\r\n\r\nhi',
      /^HTTP\/1\.1 400/,
    ],
    [
      'a malformed request line (400)',
      'POST /fast HTTP/1.1 x\r\nhost: x\r\ncontent-length: 2\r\n\r\nhi',
      /^HTTP\/1\.1 400/,
    ],
    [
      'a head longer than 16 KiB (431)',
      `POST /fast HTTP/1.1\r\nhost: x\r\nx-long: ${'a'.repeat(17_000)}\r\n\r\n`,
      /^HTTP\/1\.1 431/,
    ],
  ];
  for (const [name, request, answer] of handedOver) {
    it(`leaves node:http to answer a request with ${name}`, async () => {
      const client = await rawClient(front.port);
      const served = front.served.length;
      client.socket.write(request);
      await client.until(answer);
      client.socket.destroy();
      assert.match(client.received(), answer);
      assert.equal(front.served.length, served, 'the front served it');
    });
  }

  it("closes the connections it gave to node:http when it closes its own, and node:http's timeouts hold on them", async () => {
    const other = await startFront({
      headersTimeout: 200,
      requestTimeout: 200,
      connectionsCheckingInterval: 50,
    });
    const handedOver = await rawClient(other.port);
    handedOver.socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n');
    await handedOver.answers(1);
    // A head that never ends, on the connection node:http serves: its headers timeout answers 408.
    const slow = await rawClient(other.port);
    slow.socket.write('GET /healthz HTTP/1.1\r\nhost: x\r\n\r\nGET /healthz HTTP/1.1\r\nhos');
    const gaveUp = setTimeout(() => slow.socket.destroy(), 3000);
    await slow.until(/HTTP\/1\.1 408/);
    clearTimeout(gaveUp);
    assert.match(slow.received(), /HTTP\/1\.1 408/);
    const mine = await rawClient(other.port);
    mine.socket.write(post('x'));
    await mine.answers(1);
    other.stop();
    await Promise.all([once(handedOver.socket, 'close'), once(mine.socket, 'close')]);
  });

  it('sends a streamed answer in chunks, a whole one in end() with its length, and ends a connection asked to close', async () => {
    front.state.answerWith = (_head, body, answer) => {
      answer.writeHead(200, { 'content-type': 'text/event-stream' });
      if (body.toString() === 'whole') return void answer.end('all at once');
      answer.write('data: 1\n\n');
      answer.write('');
      setTimeout(() => answer.end('data: 2\n\n'), 10);
    };
    const client = await rawClient(front.port);
    client.socket.write(post('stream') + post('whole', 'connection: close\r\n'));
    const answers = await client.answers(2);
    await once(client.socket, 'end');
    assert.match(answers[0], /\r\ntransfer-encoding: chunked\r\n/);
    assert.ok(answers[0].endsWith('\r\n\r\n9\r\ndata: 1\n\n\r\n9\r\ndata: 2\n\n\r\n0\r\n\r\n'), answers[0]);
    assert.match(answers[1], /\r\ncontent-length: 11\r\nconnection: close\r\n\r\nall at once$/);
  });

  it('writes to the socket only what there is to send: an answer of known length, ended with nothing, is one write', async () => {
    const writes: number[] = [];
    front.state.answerWith = (_head, body, answer) => {
      // Socket writes are system calls, even empty ones: count them while this answer is written.
      const spy = mock.method(Socket.prototype, 'write');
      answer.writeHead(200, { 'content-type': 'text/plain', 'content-length': String(body.length) });
      answer.write(body);
      answer.end();
      writes.push(...spy.mock.calls.map((call) => Buffer.byteLength(call.arguments[0] as Buffer)));
      spy.mock.restore();
    };
    const client = await rawClient(front.port);
    client.socket.write(post('known length'));
    const [answer] = await client.answers(1);
    client.socket.destroy();
    assert.ok(answer.endsWith('\r\n\r\nknown length'), answer);
    assert.equal(writes.length, 1, `socket writes of ${writes.join(', ')} bytes`);
  });

  it("tells the answer in progress that its client left: 'close', destroyed, not finished", async () => {
    const left = new Promise<ClientAnswer>((resolve) => {
      front.state.answerWith = (_head, _body, answer) => {
        answer.once('close', () => resolve(answer));
      };
    });
    const client = await rawClient(front.port);
    client.socket.write(post('then leave'));
    while (!front.served.some((s) => s.body === 'then leave')) await new Promise((r) => setTimeout(r, 5));
    client.socket.destroy();
    const answer = await left;
    assert.equal(answer.destroyed, true);
    assert.equal(answer.writableFinished, false);
  });

  it('reads a head as node:http does: the same Authorization, X-Request-ID and Content-Length, or hands it over', async () => {
    const node = createServer((incoming, res) => {
      const seen = {
        authorization: incoming.headers.authorization,
        requestId: incoming.headers['x-request-id'],
        length: incoming.headers['content-length'],
      };
      incoming.resume();
      res.end(JSON.stringify(seen));
    });
    node.listen(0, '127.0.0.1');
    await once(node, 'listening');
    const { port } = node.address() as { port: number };
    const name = fc.constantFrom(
      'Authorization',
      'authorization',
      'X-Request-ID',
      'x-request-id',
      'X-Other',
      'Connection',
    );
    // Now and then a character llhttp refuses (a control character, a lone CR or LF) or one of latin1's.
    const value = fc.stringMatching(
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters node:http refuses
      /^[ \t]{0,2}([!-~\x01\r\n\x7f\xa0\xe9]([ !-~]{0,12}[!-~\xa0])?)?[ \t]{0,2}$/,
    );
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(fc.tuple(name, value), { maxLength: 5 }), async (headers) => {
          const lines = headers.map(([n, v]) => `${n}:${v}\r\n`).join('');
          const text = `POST /fast HTTP/1.1\r\nhost: x\r\n${lines}content-length: 2`;
          const read = readHead(text);
          const seen = await askNode(port, `${text}\r\nconnection: close\r\n\r\nhi`);
          if (seen === undefined) assert.equal(read, undefined, 'node:http refused it, the front did not');
          if (read === undefined) return; // node:http answers it, whatever it makes of it
          assert.deepEqual(
            {
              authorization: read.authorization,
              requestId: read.requestId,
              length: String(read.contentLength),
            },
            seen,
          );
        }),
        { numRuns: 60 },
      );
    } finally {
      node.close();
    }
  });
});

/** What node:http's handler saw of a raw request (as JSON), or undefined if node:http refused it. */
async function askNode(port: number, request: string): Promise<unknown> {
  const socket: Socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  socket.write(request, 'latin1');
  await once(socket, 'close');
  const received = Buffer.concat(chunks);
  const headEnd = received.indexOf('\r\n\r\n');
  const head = received.toString('latin1', 0, headEnd);
  const body = received.toString('utf8', headEnd + 4);
  if (!head.startsWith('HTTP/1.1 200')) return undefined;
  const seen = JSON.parse(body) as Record<string, string | undefined>;
  return { authorization: seen.authorization, requestId: seen.requestId, length: seen.length };
}
