import { OpenAPIHono } from '@hono/zod-openapi';
import { authenticate } from '../auth/authenticate.ts';
import { FailureThrottle } from '../auth/failure-throttle.ts';
import { type AuthFailures, authFailures } from '../auth/failures.ts';
import { permits } from '../auth/guard.ts';
import { DEFAULT_AUTH_FAILURE_BURST } from '../config.ts';
import { apiMetrics, DEFAULT_METRICS_REFRESH_MS } from '../metrics/api-metrics.ts';
import { processMetrics } from '../metrics/registry.ts';
import { sharedReading } from '../shared-reading.ts';
import { modelNames } from '../store/models.ts';
import { answerErrors } from './answer-errors.ts';
import type { ApiDeps } from './deps.ts';
import { docsPage } from './docs.ts';
import { validationHook } from './http.ts';
import { auditRouter } from './routes/audit.ts';
import { decisionsRouter } from './routes/decisions.ts';
import { eventsRouter } from './routes/events/index.ts';
import { healthRoutes } from './routes/health.ts';
import { loadRouter } from './routes/load.ts';
import { measurementsRouter } from './routes/measurements.ts';
import { modelsRouter } from './routes/models/index.ts';
import { nodesRouter } from './routes/nodes/index.ts';
import { quotasRouter } from './routes/quotas/index.ts';
import { replicaLogsRouter } from './routes/replica-logs.ts';
import { replicasRouter } from './routes/replicas.ts';
import { runtimesRouter } from './routes/runtimes.ts';
import { targetRouter } from './routes/target.ts';
import { tenancyRouter } from './routes/tenancy.ts';
import { tokensRouter } from './routes/tokens/index.ts';
import { treeRouter } from './routes/tree.ts';

/** The HTTP API of API.md: one router per resource under /api/v1, its OpenAPI document and docs. */
export function createApp(
  deps: ApiDeps,
  log: Pick<Console, 'warn' | 'error'> = console,
  failures: AuthFailures = apiAuthFailures(deps, log),
) {
  const app = new OpenAPIHono({ defaultHook: validationHook });
  const now = deps.now ?? Date.now;
  const throttle = new FailureThrottle(deps.authFailureBurst ?? DEFAULT_AUTH_FAILURE_BURST);
  const authenticated = authenticate(deps.sql, now, failures, throttle);
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
    runtimesRouter,
    replicasRouter,
    replicaLogsRouter,
    tokensRouter,
    auditRouter,
  ];
  for (const router of routers) {
    app.route('/api/v1', router(deps));
  }
  app.route('/api/v1', eventsRouter(deps, log));

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

  answerErrors(app, log);
  return app;
}

/** Where the API's refused authentications are counted and logged (the console's sign-ins share it). */
export const apiAuthFailures = (deps: ApiDeps, log: Pick<Console, 'warn' | 'error'>): AuthFailures =>
  authFailures({ sql: deps.sql, counter: processMetrics.authFailures, log, now: deps.now ?? Date.now });
