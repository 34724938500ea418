import { connect, type Socket } from 'node:net';
import { asksToClose, headerFields, LENGTH } from './http1-head.ts';

// Requests to replicas over kept-alive HTTP/1.1 connections, a pool per replica, as many as requests
// in flight need: a request is one write and its answer is parsed here as it comes, with none of an
// HTTP client library's objects per request (undici cost twice the CPU a request: docs/gateway.md
// "The forwarded path"). Only what the gateway sends: a POST with a body, answered with a length,
// chunked or until the replica closes.

/** What an exchange tells the one who sent it; each is called at most once, but onData. */
export interface ExchangeHandler {
  /** The answer's status and headers (names in lower case); `resume` restarts a paused answer. */
  onHeaders(status: number, headers: [string, string][], resume: () => void): void;
  /** Part of the body: false when it should pause until `resume`. */
  onData(chunk: Buffer): boolean;
  onComplete(): void;
  /** The exchange failed or was cancelled: no other call follows. */
  onError(error: Error): void;
  /**
   * The calls above that one read of the socket makes come between these two: what the handler writes
   * meanwhile may leave in one write (a streamed answer's events often come several to a read).
   */
  onReadStart?(): void;
  onReadEnd?(): void;
}

export interface ReplicaRequest {
  host: string;
  port: number;
  path: string;
  /** Header lines after Host, each ending in CRLF (Content-Length is added). */
  headers: string;
  body: Buffer;
}

/** The replica closed a connection before its answer ended: code `UPSTREAM_CLOSED`. */
export class UpstreamClosed extends Error {
  readonly code = 'UPSTREAM_CLOSED';
  constructor() {
    super('the replica closed the connection before its answer ended');
  }
}

/** The replica's answer is not HTTP/1.1 as the gateway reads it: code `UPSTREAM_MALFORMED`. */
export class UpstreamMalformed extends Error {
  readonly code = 'UPSTREAM_MALFORMED';
}

/** A head longer than this is not an answer the gateway reads. */
const MAX_HEAD_BYTES = 64 * 1024;
/** An idle connection is closed after this, or a second before the replica's own Keep-Alive timeout. */
const IDLE_MS = 4000;
/** A body this short goes in one write with its head; a longer one beside it. */
const COPIED_BODY_BYTES = 16 * 1024;
/**
 * Every connection reads into this one buffer (node:net's `onread`), one read at a time: a read of
 * its own makes an ArrayBuffer, and V8 frees those in each young collection, which holds every request
 * of the process (docs/gateway.md "The forwarded path"). What outlives a read is copied out of it.
 */
const READ_BUFFER = Buffer.allocUnsafeSlow(64 * 1024);
const HEAD_END = Buffer.from('\r\n\r\n');
const CRLF = Buffer.from('\r\n');

export class ReplicaConnections {
  /** Idle connections per replica (`host:port`), the most recently used last. */
  private readonly idle = new Map<string, Connection[]>();

  /**
   * Sends `request` on an idle connection to its replica, or on a new one (always, when `fresh`; it is
   * closed after). Returns what cancels the exchange (its handler then hears `onError(why)`).
   */
  send(request: ReplicaRequest, handler: ExchangeHandler, fresh: boolean): (why?: Error) => void {
    const key = `${request.host}:${request.port}`;
    const connection =
      (!fresh && this.takeIdle(key)) || new Connection(request, fresh ? undefined : { pool: this, key });
    connection.exchange(request, handler);
    return (why) => connection.cancel(handler, why ?? new Error('cancelled'));
  }

  /** The most recently used idle connection still open (one closed by now hears of it a tick later). */
  private takeIdle(key: string): Connection | undefined {
    const list = this.idle.get(key);
    for (let connection = list?.pop(); connection; connection = list?.pop()) {
      if (connection.open) return connection;
    }
    if (list?.length === 0) this.idle.delete(key);
    return undefined;
  }

  /** A connection whose answer ended waits for the next request. */
  keep(key: string, connection: Connection) {
    const list = this.idle.get(key);
    if (list) list.push(connection);
    else this.idle.set(key, [connection]);
  }

  /** An idle connection closed. */
  forget(key: string, connection: Connection) {
    const list = this.idle.get(key);
    const at = list?.indexOf(connection) ?? -1;
    if (!list || at < 0) return;
    list.splice(at, 1);
    if (list.length === 0) this.idle.delete(key);
  }
}

/** Where a connection's answer is: its head, a body of known length, chunks, until close, or none. */
type Reading = 'head' | 'length' | 'chunk-size' | 'chunk-data' | 'chunk-end' | 'trailers' | 'close' | 'idle';

class Connection {
  private readonly socket: Socket;
  private handler: ExchangeHandler | undefined;
  private reading: Reading = 'idle';
  private pending: Buffer | undefined;
  /** Body bytes (or the current chunk's) still to come. */
  private left = 0;
  private reusable = false;
  /** In its pool's idle list (it is then closed after `idleMs`), since `idleSince`. */
  private idle = false;
  private idleSince = 0;
  private idleMs = IDLE_MS;
  /**
   * At most one timer at a time, left to run while the connection serves: a timer per answer cost an
   * object and a timer-list insertion per request.
   */
  private idleTimer: NodeJS.Timeout | undefined;
  private idleDue = 0;

  constructor(
    { host, port }: ReplicaRequest,
    /** Where it waits between requests; a fresh connection has none and is closed after its answer. */
    private readonly kept: { pool: ReplicaConnections; key: string } | undefined,
  ) {
    this.socket = connect({
      host,
      port,
      noDelay: true,
      onread: { buffer: READ_BUFFER, callback: this.onRead },
    });
    this.socket.on('end', this.onEnd);
    this.socket.on('error', this.onClosed);
    this.socket.on('close', this.onClosed);
  }

  get open(): boolean {
    return !this.socket.destroyed;
  }

  exchange(request: ReplicaRequest, handler: ExchangeHandler) {
    this.idle = false;
    this.handler = handler;
    this.reading = 'head';
    this.reusable = false;
    const { body } = request;
    const head = `POST ${request.path} HTTP/1.1\r\nhost: ${request.host}:${request.port}\r\n${request.headers}content-length: ${body.length}\r\n\r\n`;
    if (body.length > COPIED_BODY_BYTES) {
      this.socket.cork();
      this.socket.write(head, 'latin1');
      this.socket.write(body);
      this.socket.uncork();
      return;
    }
    const bytes = Buffer.allocUnsafe(head.length + body.length);
    bytes.write(head, 0, 'latin1');
    body.copy(bytes, head.length);
    this.socket.write(bytes);
  }

  /** Ends `handler`'s exchange, if it is still this connection's (once over, the connection may serve another). */
  cancel(handler: ExchangeHandler, why: Error) {
    if (this.handler !== handler) return;
    this.handler = undefined;
    this.socket.destroy();
    handler.onError(why);
  }

  /** `length` bytes read into READ_BUFFER; reading goes on unless `pause` stopped it. */
  private readonly onRead = (length: number) => {
    if (!this.handler) {
      // Bytes while idle are no answer to anything: the connection cannot be trusted.
      this.socket.destroy();
      return true;
    }
    const { handler } = this;
    const chunk = READ_BUFFER.subarray(0, length);
    this.pending = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    handler.onReadStart?.();
    try {
      this.parse();
    } catch (error) {
      this.fail(error as Error);
    } finally {
      if (this.pending?.buffer === READ_BUFFER.buffer) this.pending = Buffer.from(this.pending);
      handler.onReadEnd?.();
    }
    return true;
  };

  /** Reads what `pending` holds of the answer, handing its body on as it comes. */
  private parse() {
    while (this.pending && this.handler) {
      const bytes = this.pending;
      switch (this.reading) {
        case 'head': {
          const end = bytes.indexOf(HEAD_END);
          if (end < 0) {
            if (bytes.length > MAX_HEAD_BYTES) throw new UpstreamMalformed('an answer head past 64 KiB');
            return;
          }
          this.rest(bytes, end + HEAD_END.length);
          this.readHead(bytes.toString('latin1', 0, end));
          break;
        }
        case 'length': {
          const take = Math.min(this.left, bytes.length);
          this.left -= take;
          this.rest(bytes, take);
          this.body(take === bytes.length ? bytes : bytes.subarray(0, take));
          if (this.left === 0) this.complete();
          break;
        }
        case 'chunk-size': {
          const end = bytes.indexOf(CRLF);
          if (end < 0) {
            if (bytes.length > 1024) throw new UpstreamMalformed('a chunk size line past 1 KiB');
            return;
          }
          this.left = chunkSize(bytes, end);
          this.rest(bytes, end + 2);
          this.reading = this.left === 0 ? 'trailers' : 'chunk-data';
          break;
        }
        case 'chunk-data': {
          const take = Math.min(this.left, bytes.length);
          this.left -= take;
          this.rest(bytes, take);
          if (this.left === 0) this.reading = 'chunk-end';
          this.body(take === bytes.length ? bytes : bytes.subarray(0, take));
          break;
        }
        case 'chunk-end': {
          if (bytes.length < 2) return;
          if (bytes[0] !== 13 || bytes[1] !== 10) throw new UpstreamMalformed('a chunk not ended by CRLF');
          this.rest(bytes, 2);
          this.reading = 'chunk-size';
          break;
        }
        case 'trailers': {
          const end = bytes.indexOf(CRLF);
          if (end < 0) return;
          this.rest(bytes, end + 2);
          if (end === 0) this.complete();
          break;
        }
        case 'close':
          this.pending = undefined;
          this.body(bytes);
          break;
        case 'idle':
          throw new UpstreamMalformed('bytes after the answer ended');
      }
    }
  }

  /** Keeps what follows the first `used` bytes of `bytes` for the next step. */
  private rest(bytes: Buffer, used: number) {
    this.pending = used < bytes.length ? bytes.subarray(used) : undefined;
  }

  private readHead(text: string) {
    if (!/^HTTP\/1\.[01] \d{3}/.test(text)) throw new UpstreamMalformed('an answer that is not HTTP/1.x');
    const status = Number(text.slice(9, 12));
    const headers = headerFields(text);
    if (!headers) throw new UpstreamMalformed('an answer with a malformed header line');
    let length = -1;
    let chunked = false;
    let close = text.startsWith('HTTP/1.0');
    for (const [name, value] of headers) {
      if (name === 'content-length') {
        if (!LENGTH.test(value) || (length >= 0 && Number(value) !== length)) {
          throw new UpstreamMalformed(`an answer length of "${value}"`);
        }
        length = Number(value);
      } else if (name === 'transfer-encoding') chunked = /(?:^|,)\s*chunked\s*$/i.test(value);
      else if (name === 'connection') close = asksToClose(value);
      else if (name === 'keep-alive') {
        const seconds = /timeout=(\d+)/i.exec(value);
        if (seconds) this.idleMs = Math.min(IDLE_MS, Math.max(0, Number(seconds[1]) * 1000 - 1000));
      }
    }
    // Informational: the answer's own head follows.
    if (status < 200) return;
    this.reusable = !close;
    this.handler?.onHeaders(status, headers, this.resume);
    if (status === 204 || status === 304 || (!chunked && length === 0)) return this.complete();
    if (chunked) this.reading = 'chunk-size';
    else if (length > 0) {
      this.reading = 'length';
      this.left = length;
    } else {
      this.reading = 'close';
      this.reusable = false;
    }
  }

  private readonly resume = () => this.socket.resume();

  /** Hands on a copy of `chunk`: a client's socket may hold it past this read. */
  private body(chunk: Buffer) {
    if (chunk.length > 0 && this.handler && !this.handler.onData(Buffer.from(chunk))) this.socket.pause();
  }

  /** The answer ended: the connection goes back to its pool, or is closed. */
  private complete() {
    const { handler, kept } = this;
    this.handler = undefined;
    this.reading = 'idle';
    this.socket.resume();
    if (this.reusable && kept && !this.pending) {
      this.idle = true;
      this.idleSince = performance.now();
      // A timer due later than this idle time ends (the replica shortened its Keep-Alive) is set again.
      if (!this.idleTimer || this.idleDue > this.idleSince + this.idleMs) this.closeIdleIn(this.idleMs);
      kept.pool.keep(kept.key, this);
    } else this.socket.destroy();
    handler?.onComplete();
  }

  /** Closes the connection once idle for `idleMs`; looks again then if it served meanwhile. */
  private readonly closeIfIdle = () => {
    this.idleTimer = undefined;
    if (!this.idle) return; // serving: its answer's end sets the timer again
    const left = this.idleSince + this.idleMs - performance.now();
    if (left <= 0) this.socket.destroy();
    else this.closeIdleIn(left);
  };

  private closeIdleIn(ms: number) {
    clearTimeout(this.idleTimer);
    this.idleDue = performance.now() + ms;
    this.idleTimer = setTimeout(this.closeIfIdle, ms);
  }

  private fail(error: Error) {
    const { handler } = this;
    this.handler = undefined;
    this.socket.destroy();
    handler?.onError(error);
  }

  private readonly onEnd = () => {
    // An answer read until the replica closes ends here; any other one ended short.
    if (this.handler && this.reading === 'close') this.complete();
    else this.onClosed();
  };

  private readonly onClosed = (error?: Error) => {
    this.socket.destroy();
    clearTimeout(this.idleTimer);
    if (this.idle && this.kept) this.kept.pool.forget(this.kept.key, this);
    this.idle = false;
    if (!this.handler) return;
    this.fail(error instanceof Error ? error : new UpstreamClosed());
  };
}

/**
 * The size of a chunk-size line (bytes[0, end)): 1 to 12 hex digits before any `;extension`, with
 * whitespace around them, read from the bytes with no string made (a streamed answer has a line per
 * event).
 */
function chunkSize(bytes: Buffer, end: number): number {
  let start = 0;
  let stop = 0;
  while (stop < end && bytes[stop] !== 59) stop++; // up to a ';'
  while (start < stop && isWhitespace(bytes[start])) start++;
  while (stop > start && isWhitespace(bytes[stop - 1])) stop--;
  if (stop === start || stop - start > 12) throw malformedSize(bytes, start, stop);
  let size = 0;
  for (let at = start; at < stop; at++) {
    const digit = hexDigit(bytes[at]);
    if (digit < 0) throw malformedSize(bytes, start, stop);
    size = size * 16 + digit;
  }
  return size;
}

const malformedSize = (bytes: Buffer, start: number, stop: number) =>
  new UpstreamMalformed(`a chunk size of "${bytes.toString('latin1', start, stop)}"`);

/** What String.prototype.trim takes away, in latin1: tab, LF, VT, FF, CR, space and no-break space. */
const isWhitespace = (byte: number) => (byte >= 9 && byte <= 13) || byte === 32 || byte === 160;

function hexDigit(byte: number): number {
  if (byte >= 48 && byte <= 57) return byte - 48;
  if (byte >= 97 && byte <= 102) return byte - 87;
  if (byte >= 65 && byte <= 70) return byte - 55;
  return -1;
}
