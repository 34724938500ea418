import type { GatewayConfig } from '../config.ts';
import type { ClientAnswer } from './client-answer.ts';
import { type Deadlined, Deadlines } from './deadlines.ts';
import { streamErrorEvent } from './errors.ts';
import type { GatewayMetrics } from './metrics.ts';
import { type ExchangeHandler, ReplicaConnections } from './replica-connections.ts';
import type { ReplicaHealth } from './replica-health.ts';
import type { Upstream } from './routing-table.ts';

/** A request to forward: its model, the path under /v1, and the body as the client sent it. */
export interface Forwarded {
  model: string;
  path: string;
  body: Buffer;
  /** The client's socket: the replica's answer is written to it as it comes. */
  client: ClientAnswer;
  /** When the request arrived (performance.now()), for TTFT and end-to-end times. */
  arrivedAt: number;
  /** The client's `x-request-id`, or one made for it: sent to the replica, and in the gateway's log lines. */
  requestId: string;
  /** The prompt's blocks (prefix-routing.ts), when routing by prefix. */
  blocks?: number[];
}

export type ForwardingSettings = Pick<
  GatewayConfig,
  'firstByteTimeoutMs' | 'requestTimeoutMs' | 'retries' | 'retryBackoffMs'
>;

/** What an attempt reports to: the gateway's metrics, the replicas' health, its timeouts. */
export interface AttemptParts {
  metrics: GatewayMetrics;
  health: ReplicaHealth;
  settings: ForwardingSettings;
}

/** No first byte from the replica within the first-byte timeout: it may hang, another may answer. */
export class FirstByteTimeout extends Error {
  readonly code = 'first_byte_timeout';
  constructor(ms: number) {
    super(`no first byte within ${ms} ms`);
  }
}
/** The request's whole time ran out before its answer began: no other replica gets it. */
export class RequestTimeout extends Error {
  readonly code = 'request_timeout';
  constructor(ms: number) {
    super(`the answer did not begin within the request timeout of ${ms} ms`);
  }
}
/**
 * A pooled connection the replica closed while the request was being sent: engines such as llama.cpp's
 * server close theirs after each streamed answer while their headers still say `Keep-Alive`, so a reused
 * socket can be dead before the replica saw the request. It says nothing of the replica's health.
 */
export class StaleConnection extends Error {
  constructor(cause: unknown) {
    super('a kept-alive connection closed before the request reached the replica', { cause });
  }
}

/** The status counted for a request whose client left before its answer ended (nginx's 499). */
export const CLIENT_LEFT = 499;

/** Kept-alive connections to every replica; the gateway's timeouts (ForwardingSettings) rule them. */
const connections = new ReplicaConnections();
/** The attempts' timeouts, each kind on one timer: before the first byte, and the request's whole time. */
const firstByteDeadlines = new Deadlines();
const requestDeadlines = new Deadlines();

/**
 * The failures of a pooled connection the replica closed under a request: reset, or closed before any
 * answer. A fresh connection that fails so fails again on the next try, which then says why.
 */
const STALE_CODES = new Set(['UPSTREAM_CLOSED', 'ECONNRESET', 'EPIPE']);

/** Headers of the replica's answer passed to the client (hop-by-hop and length ones are the server's). */
const PASSED_HEADERS = new Set(['content-type', 'cache-control']);

/**
 * One try of a request on one replica, on a pooled connection or (`fresh`) on one of its own: resolves
 * once the replica's first bytes went to the client (or the client left), rejects if the replica failed
 * before them (nothing was written: another replica may answer), with a StaleConnection when a pooled
 * connection failed before any answer. `finish` is called once when the exchange with the replica is over.
 */
export function exchange(
  parts: AttemptParts,
  request: Forwarded,
  upstream: Upstream,
  fresh: boolean,
  finish: () => void,
): Promise<void> {
  return new Promise((resolve, reject) => {
    new Attempt(parts, request, upstream, fresh, finish, resolve, reject).send();
  });
}

/** A request's answer is over (or its client left): counted by its status, and timed. */
export function countEnded(metrics: GatewayMetrics, { model, arrivedAt }: Forwarded, status: number) {
  metrics.requests.inc(model, status);
  metrics.requestSeconds.observe({ model }, (performance.now() - arrivedAt) / 1000);
}

/**
 * The handler of one exchange: the replica's answer is written to the client as it comes, and the
 * replica's stream paused while the client's socket is full (a slow client slows its stream instead of
 * filling memory). Its state lives in fields, not closures: one object a request.
 */
class Attempt implements ExchangeHandler, Deadlined {
  private readonly sentAt = performance.now();
  /** Cancels the exchange. */
  private cancel?: (error?: Error) => void;
  // Its place on a list of deadlines: one timeout at a time.
  dueAt = 0;
  earlier?: Deadlined;
  later?: Deadlined;
  list?: Deadlines;
  /** Whether the timer before the first byte is the request's whole time (less of it is left). */
  private firstTimerEndsRequest = false;
  /** Set when a timeout ran out: the gateway itself ended the exchange. */
  private timedOut?: Error;
  private heard = false;
  private answering = false;
  private left = false;
  private counted = false;
  private status = 0;
  private headers: Record<string, string> = {};
  /** The answer's length, when the replica said it (-1: not said). */
  private length = -1;
  private eventStream = false;
  private resumeAnswer?: () => void;
  /** The client's socket drained; the client left before its answer ended. */
  private readonly drained: () => void;
  private readonly clientLeft: () => void;

  constructor(
    private readonly parts: AttemptParts,
    private readonly request: Forwarded,
    private readonly upstream: Upstream,
    private readonly fresh: boolean,
    private readonly finish: () => void,
    private readonly resolve: () => void,
    private readonly reject: (error: unknown) => void,
  ) {
    // Made here rather than as class fields: tsx names each field's function with
    // Object.defineProperty for every object made, a request's (1% of a worker's CPU under load).
    this.drained = () => this.resumeAnswer?.();
    this.clientLeft = () => this.leftEarly();
  }

  send() {
    const { request, upstream, parts } = this;
    const target = targetOf(upstream);
    parts.metrics.replicaRequests.inc(request.model, upstream.id);
    // One timer at a time: until the first byte, the first-byte timeout (or what is left of the
    // request's time, if less); after it, what is left of the request's time.
    const { firstByteTimeoutMs, requestTimeoutMs } = parts.settings;
    const left = requestTimeoutMs - (this.sentAt - request.arrivedAt);
    this.firstTimerEndsRequest = left <= firstByteTimeoutMs;
    firstByteDeadlines.set(this, Math.max(0, Math.min(firstByteTimeoutMs, left)));
    request.client.on('close', this.clientLeft);
    this.cancel = connections.send(
      {
        host: target.host,
        port: target.port,
        path: target.base + request.path,
        headers: `content-type: application/json\r\nx-request-id: ${request.requestId}\r\n`,
        body: request.body,
      },
      this,
      this.fresh,
    );
  }

  onHeaders(status: number, headers: [string, string][], resume: () => void) {
    this.heard = true;
    this.status = status;
    this.resumeAnswer = resume;
    for (const [name, value] of headers) {
      if (PASSED_HEADERS.has(name)) this.headers[name] = value;
      else if (name === 'content-length') this.length = Number(value);
    }
    this.eventStream = this.headers['content-type']?.startsWith('text/event-stream') ?? false;
    this.headers['x-request-id'] = this.request.requestId;
  }

  onData(chunk: Buffer): boolean {
    if (this.left) return false;
    const { client } = this.request;
    if (this.answering) return client.write(chunk);
    // A small whole answer (most non-streaming ones) goes in one write, with its length.
    if (chunk.length === this.length) this.headers['content-length'] = String(chunk.length);
    this.begin();
    const ready = client.write(chunk);
    const { requestTimeoutMs } = this.parts.settings;
    requestDeadlines.set(this, Math.max(0, requestTimeoutMs - (performance.now() - this.request.arrivedAt)));
    client.on('drain', this.drained);
    return ready;
  }

  onComplete() {
    this.over();
    if (this.left) return;
    if (!this.answering) this.begin();
    this.request.client.end();
    this.ended(this.status);
  }

  // The events of one read of the replica's answer go to the client in one write.
  onReadStart() {
    this.request.client.cork();
  }

  onReadEnd() {
    this.request.client.uncork();
  }

  onError(error: Error) {
    this.over();
    if (this.left) return;
    if (this.answering) return this.failedMidAnswer(error);
    const stale = !this.fresh && !this.heard && STALE_CODES.has((error as { code?: string }).code ?? '');
    this.reject(this.timedOut ?? (stale ? new StaleConnection(error) : error));
  }

  /** The answer begins: its status and headers go to the client, and the replica's health hears of it. */
  private begin() {
    this.answering = true;
    this.list?.clear(this);
    this.answered();
    this.request.client.writeHead(this.status, this.headers);
    this.resolve();
  }

  /** The exchange with the replica is over, whichever way it ended. */
  private over() {
    this.list?.clear(this);
    const { client } = this.request;
    client.off('close', this.clientLeft);
    client.off('drain', this.drained);
    this.finish();
  }

  private ended(status: number) {
    if (this.counted) return;
    this.counted = true;
    countEnded(this.parts.metrics, this.request, status);
  }

  /** Cancels the exchange with the replica. */
  private stop(why?: Error) {
    this.cancel?.(why);
  }

  /** A timeout ran out. */
  due() {
    const { firstByteTimeoutMs, requestTimeoutMs } = this.parts.settings;
    const timedOut =
      this.answering || this.firstTimerEndsRequest
        ? new RequestTimeout(requestTimeoutMs)
        : new FirstByteTimeout(firstByteTimeoutMs);
    this.timedOut = timedOut;
    this.stop(timedOut);
  }

  private leftEarly() {
    const { client } = this.request;
    if (client.writableFinished) return;
    this.left = true;
    this.stop();
    this.ended(CLIENT_LEFT);
    this.resolve();
  }

  /** The replica answered: its health, its time to first bytes, and whether the answer is an error. */
  private answered() {
    const { metrics, health } = this.parts;
    const { upstream, status } = this;
    const { model } = this.request;
    const at = performance.now();
    metrics.ttftSeconds.observe({ model }, (at - this.request.arrivedAt) / 1000);
    if (status >= 500) {
      health.failed(upstream, 'errors', `answered ${status}`);
      metrics.replicaErrors.inc({ model, replica: upstream.id, kind: 'status_5xx' });
    } else {
      health.succeeded(upstream.id);
      // The replica's own time, from the request sent: what its latency as an outlier is judged on.
      health.observeTtft(upstream, at - this.sentAt);
    }
    if (status >= 400) metrics.errors.inc({ model, kind: 'upstream_status' });
  }

  /** The replica's answer failed after its first bytes went to the client. */
  private failedMidAnswer(error: Error) {
    const { metrics, health } = this.parts;
    const { upstream, timedOut } = this;
    const { client, model } = this.request;
    if (client.destroyed) return;
    if (timedOut) {
      metrics.errors.inc({ model, kind: 'request_timeout' });
    } else {
      health.failed(upstream);
      metrics.errors.inc({ model, kind: 'upstream_failed' });
    }
    metrics.replicaErrors.inc({
      model,
      replica: upstream.id,
      kind: timedOut ? 'request_timeout' : 'mid_answer',
    });
    this.ended(this.status);
    // An event stream can say why it ends; another body can only end short.
    if (!this.eventStream) return void client.destroy();
    client.end(
      streamErrorEvent(
        timedOut
          ? `the answer took longer than the gateway's request timeout (LLMGW_GATEWAY_REQUEST_TIMEOUT_S), and was ended`
          : `replica ${upstream.id} failed mid-answer (${causeOf(error)})`,
      ),
    );
  }
}

/** `ECONNREFUSED`, `ECONNRESET`: the code of a socket's failure, else its message. */
export function causeOf(error: unknown): string {
  const failure = error as { code?: string; message?: string };
  return failure.code ?? failure.message ?? String(error);
}

interface Target {
  host: string;
  port: number;
  /** The endpoint's path (`/v1`), before the request's. */
  base: string;
}

/**
 * Replicas' endpoints are plain HTTP (src/domain/node-grant.ts, the Kubernetes driver's pod addresses).
 * Parsed once per replica as the routing table gives it (a URL parse per request costs more than it
 * should). Keyed by the Upstream itself: the table keeps a replica's while its endpoint and slots stay
 * the same, and the entry of one it replaced goes with it, so nothing here needs a bound.
 */
const targets = new WeakMap<Upstream, Target>();
function targetOf(upstream: Upstream): Target {
  let target = targets.get(upstream);
  if (!target) {
    const url = new URL(upstream.endpoint);
    const port = url.port === '' ? 80 : Number(url.port);
    target = { host: url.hostname.replace(/^\[|\]$/g, ''), port, base: url.pathname.replace(/\/$/, '') };
    targets.set(upstream, target);
  }
  return target;
}
