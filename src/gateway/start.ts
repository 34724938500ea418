import { createServer } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import type { Config } from '../config.ts';
import { MAX_REPORTED_REQUESTS } from '../domain/model.ts';
import type { Reconcilers } from '../reconcilers/client.ts';
import { LoadSignals } from '../reconcilers/load-signals.ts';
import type { Sql } from '../store/db.ts';
import { GATEWAY_SOURCE, refreshLoadReports } from '../store/load.ts';
import { Admission } from './admission.ts';
import { createGatewayApp } from './app.ts';
import { Forwarder, leastInFlight } from './forwarder.ts';
import { createFront } from './http1-front.ts';
import { GatewayKeys } from './keys.ts';
import { LoadReporter, refreshEvery } from './load-reporter.ts';
import { createGatewayMetrics } from './metrics.ts';
import { PrefixRouter } from './prefix-routing.ts';
import { createProxyHandler } from './proxy.ts';
import { ReplicaHealth } from './replica-health.ts';
import { RoutingTable } from './routing-table.ts';
import { isGatewayWorker } from './workers.ts';

export interface RunningGateway {
  url: string;
  /** This gateway's load source, `gateway:<instance>`. */
  source: string;
  stop(): Promise<void>;
}

/**
 * The OpenAI-compatible gateway on host:port (port 0 picks a free one): it routes requests to ready
 * replicas and reports its counts as the load source `gateway:<instance>`.
 */
export async function startGateway(options: {
  config: Config;
  sql: Sql;
  reconcilers: Reconcilers;
  port?: number;
  log?: Pick<Console, 'warn' | 'error'>;
}): Promise<RunningGateway> {
  const { config, sql } = options;
  const log = options.log ?? console;
  const source = `${GATEWAY_SOURCE}${config.gateway.instance}`;
  // A worker of several (workers.ts) sends each replica its share of the replica's slots.
  const slotShare = isGatewayWorker() ? config.gateway.workers : 1;
  const table = new RoutingTable(sql, log, Date.now, config.policy, slotShare);
  const health = new ReplicaHealth(config.gateway);
  const loadSignals = new LoadSignals(sql, options.reconcilers, config.policy, Date.now, log);
  const reporter = new LoadReporter(
    async (model, inFlight, waiting, waitingSince) => {
      const route = table.current(model);
      if (!route) return undefined;
      const bounded = (count: number) => Math.min(count, MAX_REPORTED_REQUESTS);
      const receipt = await loadSignals.report(
        route.model,
        source,
        bounded(inFlight),
        bounded(waiting),
        waitingSince,
      );
      return receipt.capacity_at_slo;
    },
    { everyMs: refreshEvery(config.policy.loadStaleMs), run: () => refreshLoadReports(sql, source) },
    log,
  );
  const admission = new Admission(table, health, reporter, config.gateway);
  const metrics = createGatewayMetrics({
    inFlight: () => reporter.inFlightCounts(),
    // Held for a replica (scaling from zero) or for a free slot on one.
    held: () => {
      const held = admission.heldCounts();
      for (const [model, count] of forwarder.waitingCounts()) held.set(model, (held.get(model) ?? 0) + count);
      return held;
    },
    oldestHeldSeconds: () => admission.oldestHeldSeconds(),
    replicas: () =>
      health.view().map((r) => ({
        model: r.model,
        replica: r.id,
        inFlight: forwarder.inFlightOn(r.id),
        ejected: r.ejected?.reason,
      })),
  });
  health.onEjection((model, replica, reason) => {
    metrics.ejections.inc({ model, replica, reason });
    const detail = health.view().find((r) => r.id === replica)?.ejected?.detail;
    log.warn(`gateway: replica ${replica} of model ${model} ejected (${reason}): ${detail}`);
  });
  const router = config.gateway.routing === 'prefix' ? new PrefixRouter() : undefined;
  const forwarder = new Forwarder(
    health,
    reporter,
    metrics,
    (model) => table.current(model)?.replicas ?? [],
    config.gateway,
    router?.choose ?? leastInFlight,
    log,
  );
  table.onRefresh(() => {
    health.watch(table.all().map((route) => ({ model: route.model.name, replicas: route.replicas })));
    router?.keepOnly(new Set(table.all().flatMap((route) => route.replicas.map((r) => r.id))));
    forwarder.wakeAllWaiting();
  });
  await table.start();
  health.start();
  const parts = {
    keys: GatewayKeys.of(sql),
    table,
    admission,
    forwarder,
    metrics,
    maxBodyBytes: config.gateway.maxBodyBytes,
    prefixRouting: router !== undefined,
    replicas: () => health.view().map((r) => ({ ...r, in_flight: forwarder.inFlightOn(r.id) })),
    log,
  };
  const proxy = createProxyHandler(parts);
  const app = getRequestListener(createGatewayApp(parts).fetch);
  const fallback = createServer((incoming, client) => {
    if (!proxy.node(incoming, client)) void app(incoming, client);
  });
  const front = createFront({
    routeOf: proxy.routeOf,
    serve: proxy.front,
    fallback,
    maxBodyBytes: config.gateway.maxBodyBytes,
  });
  const { server } = front;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? config.gateway.port, config.host, resolve);
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.gateway.port;
  return {
    url: `http://${config.host}:${port}`,
    source,
    stop: async () => {
      table.stop();
      health.stop();
      reporter.stop();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        front.closeAllConnections();
      });
    },
  };
}
