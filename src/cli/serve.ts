import type { Server } from 'node:http';
import { serve } from '@hono/node-server';
import { Client, Connection } from '@temporalio/client';
import { createApp } from '../api/app.ts';
import { storeBootstrapAdmin, storeMetricsToken } from '../api/auth/bootstrap.ts';
import type { Config } from '../config.ts';
import type { Sql } from '../store/db.ts';
import { temporalReconcilers } from '../workflows/client.ts';

export interface RunningApi {
  url: string;
  stop(): Promise<void>;
}

/**
 * The HTTP API on host:port (port 0 picks a free one), with LLMGW_ADMIN_TOKEN stored as its admin token
 * and LLMGW_METRICS_TOKEN as its metrics token.
 */
export async function startApi(options: {
  config: Config;
  sql: Sql;
  temporalAddress: string;
  port?: number;
  log?: Pick<Console, 'warn' | 'error'>;
}): Promise<RunningApi> {
  const { config, sql } = options;
  if (config.adminToken) await storeBootstrapAdmin(sql, config.adminToken);
  if (config.metricsToken) await storeMetricsToken(sql, config.metricsToken);
  const connection = await Connection.connect({ address: options.temporalAddress });
  const client = new Client({ connection, namespace: config.temporalNamespace });
  const app = createApp(
    {
      sql,
      reconcilers: temporalReconcilers(client, config.taskQueue, options.log),
      temporalReachable: async () => {
        await connection.withDeadline(Date.now() + 2000, () => connection.workflowService.getSystemInfo({}));
        return true;
      },
      policy: config.policy,
      metricsRefreshMs: config.metricsRefreshMs,
      scopeCaps: config.scopeCaps,
    },
    options.log,
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
