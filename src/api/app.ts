import { OpenAPIHono } from '@hono/zod-openapi';
import type { Context } from 'hono';
import { Conflict, InvalidInput, NotFound, TooMany } from '../domain/errors.ts';
import { apiMetrics, DEFAULT_METRICS_REFRESH_MS } from '../metrics/api-metrics.ts';
import { processMetrics } from '../metrics/registry.ts';
import { sharedReading } from '../shared-reading.ts';
import { isConnectionError, isUnstorableText, StoreUnavailable } from '../store/db.ts';
import { modelNames } from '../store/models.ts';
import { authenticate } from './auth/authenticate.ts';
import { authFailures } from './auth/failures.ts';
import { permits } from './auth/guard.ts';
import type { ApiDeps } from './deps.ts';
import { docsPage } from './docs.ts';
import { errorBody, toErrorResponse, validationHook } from './http.ts';
import { auditRouter } from './routes/audit.ts';
import { decisionsRouter } from './routes/decisions.ts';
import { healthRoutes } from './routes/health.ts';
import { loadRouter } from './routes/load.ts';
import { measurementsRouter } from './routes/measurements.ts';
import { modelsRouter } from './routes/models/index.ts';
import { nodesRouter } from './routes/nodes.ts';
import { quotasRouter } from './routes/quotas.ts';
import { replicasRouter } from './routes/replicas.ts';
import { targetRouter } from './routes/target.ts';
import { tenancyRouter } from './routes/tenancy.ts';
import { tokensRouter } from './routes/tokens.ts';
import { treeRouter } from './routes/tree.ts';

/** The HTTP API of API.md: one router per resource under /api/v1, its OpenAPI document and docs. */
export function createApp(deps: ApiDeps, log: Pick<Console, 'warn' | 'error'> = console) {
  const app = new OpenAPIHono({ defaultHook: validationHook });
  const now = deps.now ?? Date.now;
  const failures = authFailures({ sql: deps.sql, counter: processMetrics.authFailures, log, now });
  const authenticated = authenticate(deps.sql, now, failures);
  // /readyz and llmgw_reconcilers_missing share one look at Temporal, taken at most every few seconds.
  const missingReconcilers = sharedReading(
    async () => (await deps.reconcilers.missing(await modelNames(deps.sql))).length,
    deps.metricsRefreshMs ?? DEFAULT_METRICS_REFRESH_MS,
  );
  // Open to all: /readyz looks at Temporal's search attributes at most as often, whoever asks how often.
  const missingSearchAttributes = sharedReading(
    async () => (await deps.missingSearchAttributes?.()) ?? [],
    deps.metricsRefreshMs ?? DEFAULT_METRICS_REFRESH_MS,
  );
  healthRoutes(app, deps, { missingReconcilers, missingSearchAttributes });
  // The metrics name every tenant's scopes and models: an admin or a metrics token (Prometheus) reads them.
  const metrics = apiMetrics({ ...deps, missingReconcilers });
  app.use('/metrics', authenticated);
  app.get('/metrics', permits('read-metrics'), async (c) =>
    c.body(await metrics.scrape(), 200, { 'content-type': metrics.contentType }),
  );

  // Everything under /api/v1 needs a bearer token; each route declares what its role must be allowed.
  app.use('/api/v1/*', authenticated);
  const routers = [
    tenancyRouter,
    treeRouter,
    quotasRouter,
    modelsRouter,
    loadRouter,
    targetRouter,
    decisionsRouter,
    measurementsRouter,
    nodesRouter,
    replicasRouter,
    tokensRouter,
    auditRouter,
  ];
  for (const router of routers) {
    app.route('/api/v1', router(deps));
  }

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearer', {
    type: 'http',
    scheme: 'bearer',
    description: 'a token from POST /api/v1/tokens, llmgw ctl token create or LLMGW_ADMIN_TOKEN',
  });
  app.doc31('/openapi.json', {
    openapi: '3.1.0',
    security: [{ bearer: [] }],
    info: {
      title: 'llmgw API',
      version: '1',
      description:
        'Quotas, models and the cluster of the llmgw control plane. Errors are {"error": "<one sentence>"}.',
    },
  });
  app.get('/docs', (c) => c.html(docsPage));

  app.notFound((c) => c.json(errorBody(`there is no ${c.req.method} ${c.req.path}; see /docs`), 404));
  app.onError((error, c: Context) => {
    const known = toErrorResponse(error, c);
    if (known) return known;
    if (error instanceof InvalidInput) return c.json(errorBody(error.message), 400);
    if (error instanceof NotFound) return c.json(errorBody(error.message), 404);
    if (error instanceof Conflict) return c.json(errorBody(error.message), 409);
    if (error instanceof TooMany) return c.json(errorBody(error.message), 429);
    if (isUnstorableText(error)) {
      return c.json(
        errorBody('the request holds a character the store cannot keep (such as NUL); remove it'),
        400,
      );
    }
    if (error instanceof StoreUnavailable || isConnectionError(error)) {
      return c.json(errorBody('the store (Postgres) is unreachable; try again shortly'), 503);
    }
    log.error(`${c.req.method} ${c.req.path} failed:`, error);
    return c.json(errorBody('the request failed inside llmgw; the error is in its log'), 500);
  });
  return app;
}
