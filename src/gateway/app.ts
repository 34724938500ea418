import type { HttpBindings } from '@hono/node-server';
import { type Context, Hono } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { may } from '../contracts/permissions.ts';
import { Refusal, refusalAnswer } from './errors.ts';
import { FORWARDED, type GatewayParts } from './proxy.ts';

/**
 * The OpenAI-compatible gateway's routes other than the forwarded endpoints (proxy.ts serves those):
 * GET /v1/models (the models the key may call), GET /healthz, GET /replicas and GET /metrics. Every
 * refusal has OpenAI's error shape.
 */
export function createGatewayApp(parts: GatewayParts) {
  const { keys, table, metrics } = parts;
  const log = parts.log ?? console;
  const app = new Hono<{ Bindings: HttpBindings }>();

  app.get('/v1/models', async (c) => {
    const identity = await keys.caller(c.req.header('authorization'), 'call-model');
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
    await keys.caller(c.req.header('authorization'), 'read-metrics');
    return c.json({ object: 'list', data: parts.replicas() });
  });

  app.get('/metrics', async (c) => {
    await keys.caller(c.req.header('authorization'), 'read-metrics');
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
  const { status, headers, body } = refusalAnswer(refusal);
  return c.body(body, status as ContentfulStatusCode, headers);
}
