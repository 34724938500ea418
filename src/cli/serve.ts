import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../api/app.ts';
import { storeBootstrapAdmin, storeMetricsToken } from '../api/auth/bootstrap.ts';
import { nodeCredential, temporalAuth } from '../api/auth/temporal-credentials.ts';
import { temporalReplicaLogs } from '../cluster/replica-logs.ts';
import type { Config } from '../config.ts';
import { temporalReconcilers } from '../reconcilers/client.ts';
import { ensureSearchAttributes, lackedSearchAttributes } from '../reconcilers/search-attribute-check.ts';
import type { Sql } from '../store/db.ts';

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
  const app = createApp(
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
