import { randomUUID } from 'node:crypto';
import type { HttpBindings } from '@hono/node-server';
import { RESPONSE_ALREADY_SENT } from '@hono/node-server/utils/response';
import { type Context, Hono } from 'hono';
import { type Action, type Identity, may } from '../contracts/permissions.ts';
import type { Admission } from './admission.ts';
import { openAiErrorBody, REFUSALS, Refusal } from './errors.ts';
import type { Forwarder } from './forwarder.ts';
import type { GatewayKeys } from './keys.ts';
import type { GatewayMetrics } from './metrics.ts';
import { requestBlocks } from './prefix-routing.ts';
import { readRoutedRequest } from './request-body.ts';
import type { RoutingTable } from './routing-table.ts';

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

/** The OpenAI endpoints the gateway forwards to a model's replicas, by the body's `model`. */
const FORWARDED = ['/v1/chat/completions', '/v1/completions', '/v1/embeddings'] as const;

/**
 * The OpenAI-compatible gateway: the forwarded endpoints, GET /v1/models (the models the key may call),
 * GET /healthz and GET /metrics. Every refusal has OpenAI's error shape.
 */
export function createGatewayApp(parts: GatewayParts) {
  const { keys, table, admission, forwarder, metrics } = parts;
  const log = parts.log ?? console;
  const app = new Hono<{ Bindings: HttpBindings }>();

  /** The caller, refused unless its role may do `action` at all. */
  const caller = async (c: Context, action: Action): Promise<Identity> => {
    const identity = await keys.identityOf(c.req.header('authorization'));
    const verdict = may(identity, action);
    if (!verdict.allowed) throw new Refusal('forbidden', verdict.why);
    return identity;
  };

  for (const path of FORWARDED) {
    app.post(path, async (c) => {
      const arrivedAt = performance.now();
      const given = c.env.incoming.headers['x-request-id'];
      const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
      let model = '';
      try {
        const identity = await caller(c, 'call-model');
        const request = await readRoutedRequest(c.env.incoming, parts.maxBodyBytes);
        const route = await table.route(request.model);
        // A model outside the key's view is answered exactly as one that does not exist (status, body,
        // headers): names stay private (README "Security").
        if (!route || !may(identity, 'call-model', { chain: route.chain, model: request.model }).allowed) {
          throw new Refusal(
            'unknown_model',
            `there is no model "${request.model}"; GET /v1/models lists the models this key may call`,
          );
        }
        model = request.model;
        const replicas = await admission.replicasOf(model, () => c.req.raw.signal);
        const forwarded = {
          model,
          path: path.slice('/v1'.length),
          body: request.body,
          arrivedAt,
          requestId,
          blocks: parts.prefixRouting ? requestBlocks(request.fields) : undefined,
        };
        await forwarder.forward({ ...forwarded, client: c.env.outgoing }, replicas);
        return RESPONSE_ALREADY_SENT;
      } catch (error) {
        if (!(error instanceof Refusal)) throw error;
        metrics.errors.inc({ model, kind: error.kind });
        metrics.requests.inc({ model, status: REFUSALS[error.kind].status });
        c.header('x-request-id', requestId);
        return refuse(c, error);
      }
    });
  }

  app.get('/v1/models', async (c) => {
    const identity = await caller(c, 'call-model');
    const data = table
      .all()
      .filter((route) => may(identity, 'call-model', { chain: route.chain, model: route.model.name }).allowed)
      .map((route) => ({
        id: route.model.name,
        object: 'model',
        created: 0,
        owned_by: route.model.owner ? table.label(route.model.owner) : 'llmgw',
        ready_replicas: route.replicas.length,
      }));
    return c.json({ object: 'list', data });
  });

  app.get('/healthz', (c) => c.json({ status: 'ok' }));

  // Which replicas this gateway routes to, and why not to the others: read with the same tokens as /metrics.
  app.get('/replicas', async (c) => {
    await caller(c, 'read-metrics');
    return c.json({ object: 'list', data: parts.replicas() });
  });

  app.get('/metrics', async (c) => {
    await caller(c, 'read-metrics');
    return c.body(await metrics.registry.metrics(), 200, { 'content-type': metrics.registry.contentType });
  });

  app.notFound((c) =>
    refuse(
      c,
      new Refusal(
        'not_found',
        `the gateway has no ${c.req.method} ${c.req.path}; it serves POST ${FORWARDED.join(', POST ')}, GET /v1/models and GET /replicas`,
      ),
    ),
  );

  app.onError((error, c) => {
    if (error instanceof Refusal) return refuse(c, error);
    // The client left while its request waited: nobody reads an answer.
    if (c.req.raw.signal.aborted) return new Response(null, { status: 499 });
    log.error(`gateway: ${c.req.method} ${c.req.path} failed: ${String(error)}`);
    return refuse(c, new Refusal('internal', 'the gateway failed to handle this request; its log says why'));
  });

  return app;
}

function refuse(c: Context, refusal: Refusal) {
  const { status } = REFUSALS[refusal.kind];
  if (refusal.retryAfterS !== undefined) c.header('retry-after', String(refusal.retryAfterS));
  // The rest of a body too large is never read: the connection cannot serve another request.
  if (refusal.kind === 'too_large') c.header('connection', 'close');
  return c.json(openAiErrorBody(refusal.kind, refusal.message), status);
}
