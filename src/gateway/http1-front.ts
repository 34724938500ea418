import { EventEmitter } from 'node:events';
import { type Server as HttpServer, STATUS_CODES } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import type { ClientAnswer, ClientRequestHead } from './client-answer.ts';
import { type Deadlined, Deadlines } from './deadlines.ts';
import { asksToClose, hasControl, headerFields, LENGTH } from './http1-head.ts';

// The gateway's port: the forwarded requests in their plainest HTTP/1.1 form (POST, a Content-Length
// body, no Expect, no Upgrade) are read and answered here on the socket, with none of node:http's
// streams and objects, which cost more CPU a request than the gateway's own work (docs/gateway.md
// "The forwarded path"). Any other request, and every later one on its connection, goes to
// `fallback`, a node:http server that does not listen itself: it answers what this does not read,
// and every malformed head.

export interface FrontOptions<Route> {
  /** What the front serves this request as (a forwarded endpoint), or undefined: not the front's. */
  routeOf(method: string, url: string): Route | undefined;
  /** Serves a request read whole, as `routeOf` said: its answer goes to `answer`. */
  serve(route: Route, head: ClientRequestHead, body: Buffer, answer: ClientAnswer): void;
  fallback: HttpServer;
  /** The largest body read here; a larger one's request is node:http's (a 413 that reads no more). */
  maxBodyBytes: number;
}

/**
 * A head longer than this is node:http's, which answers 431 past its limit (16 KiB by default,
 * --max-http-header-size); the front's heads are kept well below it.
 */
const MAX_HEAD_BYTES = 8 * 1024;
/** Idle between requests: node:http's keepAliveTimeout, which the answers' Keep-Alive header says. */
const KEEP_ALIVE_MS = 5000;
/** A head or body that stops arriving part-way: given up on, as node:http's headersTimeout does. */
const PARTIAL_REQUEST_MS = 60_000;
const HEAD_END = Buffer.from('\r\n\r\n');
const CRLF = '\r\n';

export interface Front {
  server: Server;
  /** Closes every connection, the front's and those it gave to the fallback. */
  closeAllConnections(): void;
}

export function createFront<Route>(options: FrontOptions<Route>): Front {
  const { fallback } = options;
  const open = new Set<Connection<Route>>();
  // The connections' idle and partial-request timeouts, each kind on one timer (not a socket timeout,
  // which every request set and cleared, and every read and write moved on).
  const idle = new Deadlines();
  const partial = new Deadlines();
  const server = createServer({ noDelay: true }, (socket) => {
    const connection = new Connection(socket, options, { idle, partial }, () => open.delete(connection));
    open.add(connection);
  });
  // node:http tracks its connections (closeAllConnections) and enforces its headers and request
  // timeouts from 'listening' on; the fallback never listens itself, so it is told it does.
  fallback.emit('listening');
  return {
    server,
    closeAllConnections() {
      for (const connection of open) connection.socket.destroy();
      fallback.closeAllConnections();
      // Stops the fallback's timeout checks (it has no port to close).
      fallback.close();
    },
  };
}

/** A request head as the front reads it: undefined when it is not one the front serves. */
interface Head extends ClientRequestHead {
  method: string;
  contentLength: number;
  close: boolean;
}

/**
 * Reads a head (up to the blank line): only `HTTP/1.1`, well-formed header lines, a Host (node:http
 * answers 400 without one), at most one valid Content-Length, and no Transfer-Encoding, Expect or
 * Upgrade, no control character but tabs; anything else is node:http's to answer. Authorization is
 * taken from its first line and repeated X-Request-IDs joined, as node:http does.
 */
export function readHead(text: string): Head | undefined {
  // The request line, read in place: METHOD SP URL SP HTTP/1.1.
  const firstEnd = text.indexOf(CRLF);
  const lineEnd = firstEnd < 0 ? text.length : firstEnd;
  const methodEnd = text.indexOf(' ');
  const urlEnd = text.indexOf(' ', methodEnd + 1);
  if (methodEnd <= 0 || urlEnd < 0 || urlEnd >= lineEnd || urlEnd === methodEnd + 1) return undefined;
  if (lineEnd - urlEnd !== 9 || !text.startsWith('HTTP/1.1', urlEnd + 1)) return undefined;
  if (hasControl(text, 0, lineEnd)) return undefined;
  const url = text.slice(methodEnd + 1, urlEnd);
  const head: Head = {
    method: text.slice(0, methodEnd),
    url,
    authorization: undefined,
    requestId: undefined,
    contentLength: 0,
    close: false,
  };
  const fields = headerFields(text);
  if (!fields) return undefined;
  let lengthSeen = false;
  let hostSeen = false;
  for (const [name, value] of fields) {
    switch (name) {
      case 'content-length':
        if (lengthSeen || !LENGTH.test(value)) return undefined;
        lengthSeen = true;
        head.contentLength = Number(value);
        break;
      case 'transfer-encoding':
      case 'expect':
      case 'upgrade':
        return undefined;
      case 'host':
        hostSeen = true;
        break;
      case 'connection':
        head.close = asksToClose(value);
        break;
      case 'authorization':
        head.authorization ??= value;
        break;
      case 'x-request-id':
        // node:http joins repeated headers it does not know: the gateway then makes an ID of its own.
        head.requestId = head.requestId === undefined ? value : `${head.requestId}, ${value}`;
        break;
    }
  }
  return hostSeen ? head : undefined;
}

/**
 * One client connection while the front reads it: requests one at a time, in order (a pipelined one
 * waits in `pending` until the answer before it ended).
 */
class Connection<Route> implements Deadlined {
  // Its place on a list of deadlines: idle, or a request read part-way.
  dueAt = 0;
  earlier?: Deadlined;
  later?: Deadlined;
  list?: Deadlines;
  /** Bytes read and not yet a whole request. */
  private pending: Buffer | undefined;
  private answer: FrontAnswer | undefined;
  /** The request in progress asked to close the connection after its answer. */
  closeAfter = false;

  constructor(
    readonly socket: Socket,
    private readonly options: FrontOptions<Route>,
    private readonly deadlines: { idle: Deadlines; partial: Deadlines },
    private readonly forget: () => void,
  ) {
    socket.on('data', this.onData);
    socket.on('drain', this.onDrain);
    socket.on('close', this.onClose);
    socket.on('error', this.onError);
    deadlines.idle.set(this, KEEP_ALIVE_MS);
  }

  /** Idle or part-way for too long: closed. */
  due() {
    this.socket.destroy();
  }

  private readonly onData = (chunk: Buffer) => {
    this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    if (this.answer) {
      // A client sending far ahead of its answers waits for them, as node:http makes it.
      if (this.pending.length > this.options.maxBodyBytes + MAX_HEAD_BYTES) this.socket.pause();
      return;
    }
    this.read();
  };

  /**
   * Serves the first whole request in `pending`, or hands the connection over if it does not serve it.
   * The next one is read once its answer has ended (`answered`), even an answer that ended within
   * `serve`: after one that asked to close, none is.
   */
  private read() {
    if (!this.pending || this.answer) return;
    const bytes = this.pending;
    const headEnd = bytes.indexOf(HEAD_END);
    if (headEnd < 0 && bytes.length <= MAX_HEAD_BYTES) {
      this.deadlines.partial.set(this, PARTIAL_REQUEST_MS);
      return;
    }
    const head =
      headEnd < 0 || headEnd > MAX_HEAD_BYTES ? undefined : readHead(bytes.toString('latin1', 0, headEnd));
    const route =
      head && head.contentLength <= this.options.maxBodyBytes
        ? this.options.routeOf(head.method, head.url)
        : undefined;
    if (!head || route === undefined) return this.handOver();
    const bodyStart = headEnd + HEAD_END.length;
    const bodyEnd = bodyStart + head.contentLength;
    if (bytes.length < bodyEnd) {
      this.deadlines.partial.set(this, PARTIAL_REQUEST_MS);
      return;
    }
    this.pending = bodyEnd < bytes.length ? bytes.subarray(bodyEnd) : undefined;
    this.closeAfter = head.close;
    this.list?.clear(this);
    this.answer = new FrontAnswer(this);
    this.options.serve(route, head, bytes.subarray(bodyStart, bodyEnd), this.answer);
  }

  /** The answer in progress was written whole: the next request may be read. */
  answered() {
    this.answer = undefined;
    if (this.closeAfter) return void this.socket.end();
    this.deadlines.idle.set(this, KEEP_ALIVE_MS);
    this.socket.resume();
    // Not within the answer's end(): its caller finishes first.
    if (this.pending) process.nextTick(() => this.read());
  }

  /**
   * node:http serves the connection from here on, from the request in `pending`: its listeners read
   * what this had read, then the socket (the listeners node:http adds when it takes a connection).
   */
  private handOver() {
    const { socket } = this;
    const pending = this.pending;
    this.pending = undefined;
    socket.off('data', this.onData);
    socket.off('drain', this.onDrain);
    socket.off('close', this.onClose);
    socket.off('error', this.onError);
    this.list?.clear(this);
    this.forget();
    this.options.fallback.emit('connection', socket);
    if (pending) socket.emit('data', pending);
  }

  private readonly onDrain = () => this.answer?.emit('drain');

  private readonly onClose = () => {
    this.list?.clear(this);
    this.forget();
    this.answer?.gone();
  };

  // The socket's failure is its 'close' (which follows): the answer in progress hears of it there.
  private readonly onError = () => {};
}

/** What an answer needs of its connection. */
interface AnswersOn {
  readonly socket: Socket;
  /** Set by an answer that says `connection: close`. */
  closeAfter: boolean;
  /** The answer was written whole. */
  answered(): void;
}

/**
 * One answer, written straight to the socket: the head with the first bytes of the body, chunked
 * unless its length is known (given, or the whole body in `end`). As ServerResponse, it emits 'drain'
 * when a full socket emptied and 'close' when its connection closed before it ended, or after it did.
 */
class FrontAnswer extends EventEmitter implements ClientAnswer {
  destroyed = false;
  headersSent = false;
  writableFinished = false;
  /** The status line and headers, until the first bytes go with them. */
  private head: string | undefined;
  private lengthGiven = false;
  private chunked = false;

  constructor(private readonly connection: AnswersOn) {
    super();
  }

  writeHead(status: number, headers: Record<string, string>) {
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}\r\n`;
    for (const name in headers) {
      if (name === 'connection') this.connection.closeAfter ||= headers[name] === 'close';
      else head += `${name}: ${headers[name]}\r\n`;
      if (name === 'content-length') this.lengthGiven = true;
    }
    this.head = head;
    this.headersSent = true;
    return this;
  }

  write(chunk: Buffer | string): boolean {
    if (this.destroyed || this.writableFinished) return false;
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    if (bytes.length === 0 && this.head === undefined) return true;
    return this.connection.socket.write(this.framed(bytes, false));
  }

  end(chunk?: Buffer | string) {
    if (this.destroyed || this.writableFinished) return this;
    const bytes = chunk === undefined ? EMPTY : typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    const framed = this.framed(bytes, true);
    // An answer whose length was known ends with nothing to send: an empty write is still a system call.
    if (framed.length > 0) this.connection.socket.write(framed);
    this.writableFinished = true;
    this.connection.answered();
    process.nextTick(() => this.emit('close'));
    return this;
  }

  destroy() {
    if (!this.destroyed) this.connection.socket.destroy();
    this.destroyed = true;
    return this;
  }

  cork() {
    this.connection.socket.cork();
  }

  uncork() {
    this.connection.socket.uncork();
  }

  /** The connection closed: before this answer ended, the client left. */
  gone() {
    if (this.writableFinished || this.destroyed) return;
    this.destroyed = true;
    this.emit('close');
  }

  /** `bytes` as they go on the wire: after the head if it is still to go, in a chunk if chunked. */
  private framed(bytes: Buffer, last: boolean): Buffer {
    if (!this.headersSent) this.writeHead(200, {});
    let prefix = '';
    if (this.head !== undefined) {
      prefix = this.head;
      this.head = undefined;
      if (!this.lengthGiven) {
        // A whole body in one end(): its length is known, as node:http sends it.
        if (last) prefix += `content-length: ${bytes.length}\r\n`;
        else {
          this.chunked = true;
          prefix += 'transfer-encoding: chunked\r\n';
        }
      }
      prefix += this.connection.closeAfter ? 'connection: close\r\n\r\n' : KEEP_ALIVE;
    }
    if (this.chunked && bytes.length > 0) prefix += `${bytes.length.toString(16)}\r\n`;
    const suffix = this.chunked ? (bytes.length > 0 ? CRLF : '') + (last ? '0\r\n\r\n' : '') : '';
    if (prefix === '' && suffix === '') return bytes;
    const framed = Buffer.allocUnsafe(prefix.length + bytes.length + suffix.length);
    framed.write(prefix, 0, 'latin1');
    bytes.copy(framed, prefix.length);
    framed.write(suffix, prefix.length + bytes.length, 'latin1');
    return framed;
  }
}

const EMPTY = Buffer.alloc(0);
const KEEP_ALIVE = `connection: keep-alive\r\nkeep-alive: timeout=${KEEP_ALIVE_MS / 1000}\r\n\r\n`;
