import { Agent, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { GatewayConfig } from '../config.ts';
import { pickReplica } from './balancer.ts';
import { Refusal, streamErrorEvent } from './errors.ts';
import type { LoadReporter } from './load-reporter.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { ReplicaHealth } from './replica-health.ts';
import type { Upstream } from './routing-table.ts';

/** A request to forward: its model, the path under /v1, and the body as the client sent it. */
export interface Forwarded {
  model: string;
  path: string;
  body: Buffer;
  /** The client's socket: the replica's answer is written to it as it comes. */
  client: ServerResponse;
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

/** Chooses the replica of `free` a request goes to, and says why (a label of the selections metric). */
export type ChooseReplica = (
  request: Forwarded,
  free: readonly Upstream[],
  inFlight: (id: string) => number,
) => { upstream: Upstream; reason: string } | undefined;

/** Fewest in flight, ties at random. */
export const leastInFlight: ChooseReplica = (_request, free, inFlight) => {
  const upstream = pickReplica(free, inFlight);
  return upstream && { upstream, reason: 'least_in_flight' };
};

/** No first byte from the replica within the first-byte timeout: it may hang, another may answer. */
class FirstByteTimeout extends Error {
  readonly code = 'first_byte_timeout';
  constructor(ms: number) {
    super(`no first byte within ${ms} ms`);
  }
}
/** The request's whole time ran out before its answer began: no other replica gets it. */
class RequestTimeout extends Error {
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
class StaleConnection extends Error {
  constructor(cause: unknown) {
    super('a kept-alive connection closed before the request reached the replica', { cause });
  }
}
/** Headers of the replica's answer passed to the client (hop-by-hop and length ones are the server's). */
const PASSED_HEADERS = ['content-type', 'cache-control', 'x-request-id'];
/** The status counted for a request whose client left before its answer ended (nginx's 499). */
const CLIENT_LEFT = 499;
/** Connections to replicas are kept open between requests, as many as requests in flight need. */
const agent = new Agent({ keepAlive: true, maxFreeSockets: 1024 });

/**
 * Sends requests to replicas and writes their answers to the client as they come, pausing the replica's
 * stream while the client's socket is full: a slow client slows its stream instead of filling memory.
 * Counts each request in flight for its model's load and its replica's share, until its answer ends or
 * the client leaves (which cancels the request on the replica).
 */
export class Forwarder {
  private readonly perReplica = new Map<string, number>();
  /** Requests waiting for a free slot, per model, first come first served. */
  private readonly waiting = new Map<string, (() => void)[]>();

  constructor(
    private readonly health: ReplicaHealth,
    private readonly reporter: LoadReporter,
    private readonly metrics: GatewayMetrics,
    /** The model's ready replicas now: what a request that waited for a slot chooses from. */
    private readonly replicasNow: (model: string) => readonly Upstream[],
    private readonly settings: ForwardingSettings,
    private readonly choose: ChooseReplica = leastInFlight,
    private readonly log: Pick<Console, 'warn'> = console,
  ) {}

  /** Requests in flight to the replica from this gateway. */
  inFlightOn(id: string): number {
    return this.perReplica.get(id) ?? 0;
  }

  /**
   * Resolves once the answer has begun; throws a Refusal when no replica could begin it. A request finds
   * every replica it may go to at its slots (Upstream.slots) waits, in turn, for the next free slot on
   * any replica of its model, counted as waiting in the model's load: queued in the gateway, not inside
   * one engine while another has room.
   */
  async forward(request: Forwarded, replicas: readonly Upstream[]): Promise<void> {
    const tried = new Set<string>();
    let failure = '';
    let choices = replicas;
    let woken = false;
    for (let attempt = 0; attempt <= this.settings.retries; ) {
      // A client gone before this attempt closed before its 'close' could be heard: nothing would end it.
      if (request.client.destroyed) return this.counted(request, CLIENT_LEFT);
      const candidates = choices.filter((r) => !tried.has(r.id) && this.health.routable(r.id));
      // A newcomer does not pass the requests already waiting; one whose turn came takes its slot.
      const queued = !woken && this.waiting.has(request.model);
      const free = queued ? [] : candidates.filter((r) => this.hasSlot(r));
      if (candidates.length > 0 && free.length === 0) {
        // Its turn came and another took the slot first: it waits at the head of the line again.
        if (!(await this.slotFor(request, woken))) return this.counted(request, CLIENT_LEFT);
        woken = true;
        choices = this.replicasNow(request.model);
        continue;
      }
      const chosen = this.choose(request, free, this.inFlight);
      if (!chosen) break;
      const { upstream } = chosen;
      if (attempt > 0) {
        await backoff(this.settings.retryBackoffMs, attempt);
        if (request.client.destroyed) return this.counted(request, CLIENT_LEFT);
      }
      attempt++;
      tried.add(upstream.id);
      this.metrics.selections.inc({ model: request.model, reason: attempt > 1 ? 'retry' : chosen.reason });
      try {
        return await this.attemptOn(request, upstream);
      } catch (error) {
        if (request.client.destroyed) return;
        const cause = causeOf(error);
        this.metrics.replicaErrors.inc({
          model: request.model,
          replica: upstream.id,
          kind: errorKind(error),
        });
        if (error instanceof RequestTimeout) {
          throw new Refusal(
            'upstream_timeout',
            `replica ${upstream.id} ${error.message} (LLMGW_GATEWAY_REQUEST_TIMEOUT_S)`,
          );
        }
        this.health.failed(
          upstream,
          error instanceof FirstByteTimeout ? 'first_byte_timeout' : 'errors',
          cause,
        );
        failure = `replica ${upstream.id} failed before answering (${cause})`;
        this.log.warn(`gateway: request ${request.requestId} of model ${request.model}: ${failure}`);
      }
    }
    throw new Refusal(
      'upstream_failed',
      failure
        ? `${failure}, and no other ready replica of model ${request.model} could take the request`
        : `no ready replica of model ${request.model} may take requests now (each failed its last requests and awaits a health probe)`,
    );
  }

  private readonly inFlight = (id: string) => this.perReplica.get(id) ?? 0;

  private hasSlot(upstream: Upstream): boolean {
    return upstream.slots === undefined || (this.perReplica.get(upstream.id) ?? 0) < upstream.slots;
  }

  /**
   * Waits for a slot of the request's model to free (or for the routes to change): false when the client
   * left meanwhile. The request counts as waiting in the model's load while it waits.
   */
  private slotFor(request: Forwarded, first: boolean): Promise<boolean> {
    const { model, client } = request;
    const queue = this.waiting.get(model) ?? [];
    this.waiting.set(model, queue);
    this.reporter.change(model, 0, 1);
    return new Promise((resolve) => {
      const done = (served: boolean) => {
        client.off('close', left);
        this.reporter.change(model, 0, -1);
        resolve(served);
      };
      const turn = () => done(true);
      const left = () => {
        const at = queue.indexOf(turn);
        if (at >= 0) queue.splice(at, 1);
        if (queue.length === 0 && this.waiting.get(model) === queue) this.waiting.delete(model);
        done(false);
      };
      if (first) queue.unshift(turn);
      else queue.push(turn);
      client.once('close', left);
    });
  }

  /**
   * Gives freed slots of the model to the requests waiting for one, oldest first: as many as its
   * replicas now have free. Called when a request ends and when the routes change (a replica ready).
   */
  wakeWaiting(model: string) {
    const queue = this.waiting.get(model);
    if (!queue) return;
    const routable = this.replicasNow(model).filter((upstream) => this.health.routable(upstream.id));
    // With no replica left to wait for, every request is woken to be refused (or held by admission).
    let free = routable.length === 0 ? queue.length : 0;
    for (const upstream of routable) {
      const used = this.perReplica.get(upstream.id) ?? 0;
      free += upstream.slots === undefined ? queue.length : Math.max(0, upstream.slots - used);
    }
    const woken = queue.splice(0, free);
    if (queue.length === 0) this.waiting.delete(model);
    for (const turn of woken) turn();
  }

  /** After the routes changed: slots may have come (a replica ready) or gone. */
  wakeAllWaiting() {
    for (const model of [...this.waiting.keys()]) this.wakeWaiting(model);
  }

  /** The models with requests waiting for a slot, and how many. */
  waitingCounts(): Map<string, number> {
    return new Map([...this.waiting].map(([model, queue]) => [model, queue.length]));
  }

  /** Counts one request in flight; the returned function ends it (once). */
  private begin(model: string, replica: string): () => void {
    this.reporter.change(model, 1, 0);
    this.perReplica.set(replica, (this.perReplica.get(replica) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      this.reporter.change(model, -1, 0);
      const left = (this.perReplica.get(replica) ?? 1) - 1;
      if (left > 0) this.perReplica.set(replica, left);
      else this.perReplica.delete(replica);
      if (this.waiting.has(model)) this.wakeWaiting(model);
    };
  }

  /**
   * One replica's try: a request lost on a stale pooled connection is sent again to the same replica on a
   * connection of its own (a fresh one cannot be stale), so only what the replica itself did fails it.
   */
  private async attemptOn(request: Forwarded, upstream: Upstream): Promise<void> {
    try {
      return await this.attempt(request, upstream, agent);
    } catch (error) {
      if (!(error instanceof StaleConnection) || request.client.destroyed) throw error;
      this.metrics.staleRetries.inc({ model: request.model });
      return await this.attempt(request, upstream, false).catch((again) => {
        throw again instanceof StaleConnection ? again.cause : again;
      });
    }
  }

  /**
   * One try: resolves once the replica's first bytes went to the client, rejects if the replica failed
   * before them (nothing was written: another replica may answer), with a StaleConnection when a reused
   * socket failed before any answer.
   */
  private attempt(request: Forwarded, upstream: Upstream, pool: Agent | false): Promise<void> {
    const { model, client } = request;
    const url = targetOf(upstream.endpoint, request.path);
    return new Promise((resolve, reject) => {
      let answering = false;
      const send = url.secure ? httpsRequest : httpRequest;
      const outgoing = send({
        ...url.address,
        method: 'POST',
        agent: url.secure ? undefined : pool,
        headers: {
          'content-type': 'application/json',
          'content-length': request.body.length,
          'x-request-id': request.requestId,
        },
      });
      const sentAt = performance.now();
      this.metrics.replicaRequests.inc({ model, replica: upstream.id });
      // One timer at a time: until the first byte, the first-byte timeout (or what is left of the
      // request's time, if less); after it, what is left of the request's time.
      const { firstByteTimeoutMs, requestTimeoutMs } = this.settings;
      const left = requestTimeoutMs - (sentAt - request.arrivedAt);
      let timedOut: Error | undefined;
      let timer: NodeJS.Timeout | undefined = setTimeout(
        () => {
          timedOut =
            left <= firstByteTimeoutMs
              ? new RequestTimeout(requestTimeoutMs)
              : new FirstByteTimeout(firstByteTimeoutMs);
          outgoing.destroy(timedOut);
        },
        Math.max(0, Math.min(firstByteTimeoutMs, left)),
      );
      // Every way an attempt ends (answered, failed, reset, cancelled) closes its request to the replica:
      // its count ends there, once, whichever handler saw the end.
      const finish = this.begin(model, upstream.id);
      outgoing.once('close', () => {
        clearTimeout(timer);
        finish();
        client.off('close', clientLeft);
      });
      let over = false;
      const ended = (status: number) => {
        if (over) return;
        over = true;
        this.counted(request, status);
      };
      const clientLeft = () => {
        if (client.writableFinished) return;
        outgoing.destroy();
        ended(CLIENT_LEFT);
        resolve();
      };
      let heard = false;
      const failed = (error: Error) => {
        if (answering) return;
        client.off('close', clientLeft);
        if (timedOut) return reject(timedOut);
        reject(!heard && outgoing.reusedSocket ? new StaleConnection(error) : error);
      };
      client.once('close', clientLeft);
      outgoing.once('error', failed);
      outgoing.once('response', (answer: IncomingMessage) => {
        heard = true;
        const status = answer.statusCode ?? 502;
        const begin = (headers: Record<string, string | number> = {}) => {
          answering = true;
          clearTimeout(timer);
          timer = undefined;
          this.answered(upstream, status, model, request.arrivedAt, sentAt);
          for (const name of PASSED_HEADERS) {
            const value = answer.headers[name];
            if (typeof value === 'string') headers[name] = value;
          }
          headers['x-request-id'] = request.requestId;
          client.writeHead(status, headers);
          resolve();
        };
        answer.once('data', (first: Buffer) => {
          // A small whole answer (most non-streaming ones) goes in one write, with its length.
          if (answer.complete && !answer.readableLength) {
            begin({ 'content-length': first.length });
            answer.once('end', () => ended(status));
            answer.resume();
            return void client.end(first);
          }
          begin();
          client.write(first);
          const expired = () => timedOut;
          timer = setTimeout(
            () => {
              timedOut = new RequestTimeout(requestTimeoutMs);
              answer.destroy(timedOut);
            },
            Math.max(0, requestTimeoutMs - (performance.now() - request.arrivedAt)),
          );
          this.stream(answer, client, upstream, model, () => ended(status), expired);
        });
        answer.once('end', () => {
          if (answering) return;
          begin();
          client.end();
          ended(status);
        });
        answer.once('error', failed);
      });
      outgoing.end(request.body);
    });
  }

  /** A request's answer is over (or its client left): counted by its status, and timed. */
  private counted({ model, arrivedAt }: Forwarded, status: number) {
    this.metrics.requests.inc({ model, status });
    this.metrics.requestSeconds.observe({ model }, (performance.now() - arrivedAt) / 1000);
  }

  /** The replica's answer after its first bytes: passed on with backpressure, to its end or failure. */
  private stream(
    answer: IncomingMessage,
    client: ServerResponse,
    upstream: Upstream,
    model: string,
    ended: () => void,
    /** Set when the request's time ran out: the gateway itself ended the answer. */
    expired: () => Error | undefined,
  ) {
    answer.on('data', (chunk: Buffer) => {
      if (!client.write(chunk)) answer.pause();
    });
    client.on('drain', () => answer.resume());
    answer.once('end', () => {
      client.end();
      ended();
    });
    answer.once('error', (error) => {
      if (client.destroyed) return;
      const timedOut = expired();
      if (timedOut) {
        this.metrics.errors.inc({ model, kind: 'request_timeout' });
      } else {
        this.health.failed(upstream);
        this.metrics.errors.inc({ model, kind: 'upstream_failed' });
      }
      this.metrics.replicaErrors.inc({
        model,
        replica: upstream.id,
        kind: timedOut ? 'request_timeout' : 'mid_answer',
      });
      ended();
      // An event stream can say why it ends; another body can only end short.
      if (!answer.headers['content-type']?.startsWith('text/event-stream')) return void client.destroy();
      client.end(
        streamErrorEvent(
          timedOut
            ? `the answer took longer than the gateway's request timeout (LLMGW_GATEWAY_REQUEST_TIMEOUT_S), and was ended`
            : `replica ${upstream.id} failed mid-answer (${causeOf(error)})`,
        ),
      );
    });
  }

  /** A replica answered: its health, its time to first bytes, and whether the answer is an error. */
  private answered(upstream: Upstream, status: number, model: string, arrivedAt: number, sentAt: number) {
    const at = performance.now();
    this.metrics.ttftSeconds.observe({ model }, (at - arrivedAt) / 1000);
    if (status >= 500) {
      this.health.failed(upstream, 'errors', `answered ${status}`);
      this.metrics.replicaErrors.inc({ model, replica: upstream.id, kind: 'status_5xx' });
    } else {
      this.health.succeeded(upstream.id);
      // The replica's own time, from the request sent: what its latency as an outlier is judged on.
      this.health.observeTtft(upstream, at - sentAt);
    }
    if (status >= 400) this.metrics.errors.inc({ model, kind: 'upstream_status' });
  }
}

interface Target {
  secure: boolean;
  address: { hostname: string; port: string; path: string };
}

/** Parsed once per replica endpoint and path: a URL parse per request costs more than it should. */
// A Map, not lru-cache: lru-cache's get costs 75 ns against a Map's 53 on this hot path (npm run bench --
// libraries), and a few pairs per replica never reach 10,000.
const targets = new Map<string, Target>();
function targetOf(endpoint: string, path: string): Target {
  const key = `${endpoint}\n${path}`;
  let target = targets.get(key);
  if (!target) {
    const url = new URL(`${endpoint.replace(/\/$/, '')}${path}`);
    const secure = url.protocol === 'https:';
    // An IPv6 host is written in brackets in a URL, and without them in a request's options.
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    target = {
      secure,
      address: { hostname, port: url.port || (secure ? '443' : '80'), path: url.pathname + url.search },
    };
    if (targets.size >= 10_000) targets.clear();
    targets.set(key, target);
  }
  return target;
}

/** Attempt n (from 1) after a failure waits a random time up to base * 2^(n-1): full jitter. */
function backoff(baseMs: number, attempt: number): Promise<void> | undefined {
  if (baseMs <= 0) return undefined;
  return new Promise((resolve) => setTimeout(resolve, Math.random() * baseMs * 2 ** (attempt - 1)));
}

/** The kind of a failure before the first byte, a label of the per-replica errors metric. */
function errorKind(error: unknown): string {
  if (error instanceof FirstByteTimeout || error instanceof RequestTimeout) return error.code;
  return 'connection';
}

/** `ECONNREFUSED`, `ECONNRESET`: the code of a socket's failure, else its message. */
function causeOf(error: unknown): string {
  const failure = error as { code?: string; message?: string };
  return failure.code ?? failure.message ?? String(error);
}
