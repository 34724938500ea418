import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { Client, Connection } from '@temporalio/client';
import { apiAuthFailures, createApp } from '../api/app.ts';
import type { ApiDeps } from '../api/deps.ts';
import { storeBootstrapAdmin, storeMetricsToken } from '../auth/bootstrap.ts';
import { temporalReplicaLogs } from '../cluster/replica-logs.ts';
import type { Config } from '../config.ts';
import { consoleRouter } from '../console/index.tsx';
import { nodeCredential, temporalAuth } from '../contracts/temporal-credentials.ts';
import { temporalReconcilers } from '../reconcilers/client.ts';
import { ensureSearchAttributes, lackedSearchAttributes } from '../reconcilers/search-attribute-check.ts';
import type { Sql } from '../store/db.ts';

/**
 * The HTTP API and, at /ui, the web console, which reads through the API itself, in-process, as the
 * signed-in token. Refused sign-ins are counted and logged with the API's refused tokens.
 */
export function serverApp(deps: ApiDeps, log: Pick<Console, 'warn' | 'error'> = console) {
  const failures = apiAuthFailures(deps, log);
  const app = createApp(deps, log, failures);
  app.route(
    '/ui',
    consoleRouter(deps, (path, init) => app.request(path, init), {
      temporalWorkflows: deps.temporalWorkflowsUrl ?? 'http://localhost:8233/namespaces/default/workflows',
      failures,
      trustProxy: deps.trustProxy ?? false,
    }),
  );
  return app;
}

export interface RunningApi {
  url: string;
  stop(): Promise<void>;
}

/**
 * The HTTP API on host:port (port 0 picks a free one), with LLMGW_ADMIN_TOKEN stored as its admin token
 * and LLMGW_METRICS_TOKEN as its metrics token. Temporal's namespace gets llmgw's search attributes (or
 * this throws the sentence saying how), and /readyz is 503 whenever it lacks them.
 */
export async function startApi(options: {
  config: Config;
  sql: Sql;
  temporalAddress: string;
  port?: number;
  log?: Pick<Console, 'warn' | 'error'>;
}): Promise<RunningApi> {
  const { config, sql } = options;
  const { temporalKey } = config;
  const log = options.log ?? console;
  if (config.adminToken) await storeBootstrapAdmin(sql, config.adminToken);
  if (config.metricsToken) await storeMetricsToken(sql, config.metricsToken);
  const connection = await Connection.connect({
    address: options.temporalAddress,
    ...temporalAuth(config.temporalKey),
  });
  const namespace = config.temporalNamespace;
  await ensureSearchAttributes(connection.operatorService, namespace, log).catch(async (error) => {
    await connection.close();
    throw error;
  });
  const client = new Client({ connection, namespace });
  const soon = <T>(call: () => Promise<T>) => connection.withDeadline(Date.now() + 2000, call);
  const app = serverApp(
    {
      sql,
      reconcilers: temporalReconcilers(client, config.taskQueue, log),
      replicaLogs: temporalReplicaLogs(client, config.taskQueue),
      temporalReachable: async () => {
        await soon(() => connection.workflowService.getSystemInfo({}));
        return true;
      },
      missingSearchAttributes: async () =>
        (await soon(() => lackedSearchAttributes(connection.operatorService, namespace))).map(
          (key) => key.name,
        ),
      policy: config.policy,
      metricsRefreshMs: config.metricsRefreshMs,
      scopeCaps: config.scopeCaps,
      temporalWorkflowsUrl: `${config.temporalUiUrl}/namespaces/${namespace}/workflows`,
      trustProxy: config.trustProxy,
      authFailureBurst: config.authFailureBurst,
      ...(temporalKey && {
        nodeCredential: (node: string) => nodeCredential(temporalKey, node, namespace, Date.now()),
      }),
    },
    log,
  );
  const server = await new Promise<Server>((resolve, reject) => {
    const started = serve(
      { fetch: app.fetch, port: options.port ?? config.port, hostname: config.host },
      () => resolve(started as Server),
    ) as Server;
    started.once('error', reject);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  return {
    url: `http://${config.host}:${port}`,
    stop: async () => {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections?.();
      await connection.close();
    },
  };
}
