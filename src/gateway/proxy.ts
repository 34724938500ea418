import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { may } from '../contracts/permissions.ts';
import type { Admission } from './admission.ts';
import type { ClientAnswer, ClientRequestHead } from './client-answer.ts';
import { REFUSALS, Refusal, refusalAnswer } from './errors.ts';
import type { Forwarded, Forwarder } from './forwarder.ts';
import type { GatewayKeys } from './keys.ts';
import type { GatewayMetrics } from './metrics.ts';
import { requestBlocks } from './prefix-routing.ts';
import { readBody, routedRequest } from './request-body.ts';
import type { RoutingTable } from './routing-table.ts';

/** The OpenAI endpoints the gateway forwards to a model's replicas, by the body's `model`. */
export const FORWARDED = ['/v1/chat/completions', '/v1/completions', '/v1/embeddings'] as const;

/** Each forwarded endpoint's path on the replica (under its /v1 base URL). */
const REPLICA_PATHS = new Map<string, string>(FORWARDED.map((path) => [path, path.slice('/v1'.length)]));

/** What the gateway's routes use (app.ts and this file). */
export interface GatewayParts {
  keys: GatewayKeys;
  table: RoutingTable;
  admission: Admission;
  forwarder: Forwarder;
  metrics: GatewayMetrics;
  /** The largest body forwarded (LLMGW_GATEWAY_MAX_BODY_MIB). */
  maxBodyBytes: number;
  /** Whether requests are routed by prompt prefix: their prompt's blocks are then read. */
  prefixRouting: boolean;
  /** Every replica this gateway knows, its health and load: GET /replicas. */
  replicas(): unknown[];
  log?: Pick<Console, 'error'>;
}

/** A client's own request ID is kept if it is this short and printable; else one is made. */
const REQUEST_ID = /^[\x21-\x7e]{1,200}$/;

/** The path on the replica of a forwarded endpoint's request (POST only), else undefined. */
function replicaPathOf(method: string | undefined, url: string): string | undefined {
  if (method !== 'POST') return undefined;
  const query = url.indexOf('?');
  return REPLICA_PATHS.get(query < 0 ? url : url.slice(0, query));
}

/**
 * The forwarded endpoints, served on the request and answer as they come, with no Hono: its adapter
 * builds a Web Request, a context and a promise chain for each request, which cost more CPU than the
 * gateway's own work (docs/gateway.md "The forwarded path"). `front` serves what http1-front.ts read
 * whole (`routeOf` gives its replica path); `node` what node:http serves, and returns false for any
 * other request: Hono serves it.
 */
export function createProxyHandler(parts: GatewayParts) {
  const { keys, table, admission, forwarder, metrics } = parts;
  const log = parts.log ?? console;

  async function proxy(
    head: ClientRequestHead,
    source: Buffer | IncomingMessage,
    client: ClientAnswer,
    path: string,
  ) {
    const arrivedAt = performance.now();
    const given = head.requestId;
    const requestId = given !== undefined && REQUEST_ID.test(given) ? given : randomUUID();
    let model = '';
    try {
      // Each step answers at once when it can (a kept key, a known route, ready replicas): awaited only
      // when it gave a promise, as a needless await costs a promise and a turn of the microtask queue.
      const called = keys.caller(head.authorization, 'call-model');
      const identity = called instanceof Promise ? await called : called;
      const body = Buffer.isBuffer(source) ? source : await readBody(source, parts.maxBodyBytes);
      const request = routedRequest(body);
      const found = table.route(request.model);
      const route = found instanceof Promise ? await found : found;
      // A model outside the key's view is answered exactly as one that does not exist (status, body,
      // headers): names stay private (README "Security").
      if (!route || !may(identity, 'call-model', { chain: route.chain, model: request.model }).allowed) {
        throw new Refusal(
          'unknown_model',
          `there is no model "${request.model}"; GET /v1/models lists the models this key may call`,
        );
      }
      model = request.model;
      const ready = admission.replicasOf(model, () => leaving(client));
      const replicas = ready instanceof Promise ? await ready : ready;
      const forwarded: Forwarded = {
        model,
        path,
        body: request.body,
        client,
        arrivedAt,
        requestId,
        blocks: parts.prefixRouting ? requestBlocks(request.fields) : undefined,
      };
      await forwarder.forward(forwarded, replicas);
    } catch (error) {
      // The client left while its request waited: nobody reads an answer.
      if (client.destroyed) return;
      if (error instanceof Refusal) {
        metrics.errors.inc({ model, kind: error.kind });
        metrics.requests.inc(model, REFUSALS[error.kind].status);
        return refuse(client, error, requestId);
      }
      log.error(`gateway: POST ${head.url} failed: ${String(error)}`);
      if (client.headersSent) return void client.destroy();
      refuse(
        client,
        new Refusal('internal', 'the gateway failed to handle this request; its log says why'),
        requestId,
      );
    }
  }

  return {
    /** The replica path of a request the HTTP/1.1 front reads (http1-front.ts `routeOf`). */
    routeOf: replicaPathOf,
    front(path: string, head: ClientRequestHead, body: Buffer, answer: ClientAnswer) {
      void proxy(head, body, answer, path);
    },
    node(incoming: IncomingMessage, client: ServerResponse): boolean {
      const url = incoming.url ?? '';
      const path = replicaPathOf(incoming.method, url);
      if (path === undefined) return false;
      const { authorization } = incoming.headers;
      const requestId = incoming.headers['x-request-id'];
      const head = { url, authorization, requestId: typeof requestId === 'string' ? requestId : undefined };
      void proxy(head, incoming, client, path);
      return true;
    },
  };
}

/** Aborted when the client leaves before its answer ended: asked for only by a request that waits. */
function leaving(client: ClientAnswer): AbortSignal {
  const controller = new AbortController();
  client.once('close', () => {
    if (!client.writableFinished) controller.abort(new Error('the client left'));
  });
  return controller.signal;
}

function refuse(client: ClientAnswer, refusal: Refusal, requestId?: string) {
  const { status, headers, body } = refusalAnswer(refusal);
  if (requestId) headers['x-request-id'] = requestId;
  client.writeHead(status, headers);
  client.end(body);
}
