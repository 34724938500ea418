import { hostname } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { createActivities } from '../activities/index.ts';
import { PolicyCache } from '../activities/policy-cache.ts';
import { AgentDriver } from '../cluster/agent-driver.ts';
import { DriverByNode } from '../cluster/driver-by-node.ts';
import { NodeWatch } from '../cluster/node-watch.ts';
import { SimServing } from '../cluster/sim/serving.ts';
import { SimCluster } from '../cluster/sim/sim-cluster.ts';
import { SimClusterLeader } from '../cluster/sim/sim-leader.ts';
import type { Config } from '../config.ts';
import { temporalAuth } from '../contracts/temporal-credentials.ts';
import { processMetrics } from '../metrics/registry.ts';
import { serveMetrics } from '../metrics/server.ts';
import { workerMetrics } from '../metrics/worker-metrics.ts';
import { temporalReconcilers } from '../reconcilers/client.ts';
import { LoadSignals } from '../reconcilers/load-signals.ts';
import { watchReconcilers } from '../reconcilers/reconciler-watch.ts';
import { ensureSearchAttributes } from '../reconcilers/search-attribute-check.ts';
import type { Sql } from '../store/db.ts';
import { Lease } from '../store/lease.ts';
import { listModels } from '../store/models.ts';
import { modelsWaitingOn } from '../store/replicas.ts';
import { readQuotaPolicy } from '../store/snapshot.ts';
import { loadSimCluster } from './sim-cluster.ts';

const WORKFLOWS = fileURLToPath(new URL('../workflows/index.ts', import.meta.url));

export interface RunningWorker {
  stop(): Promise<void>;
  /** Resolves when the worker stopped (or rejects when it failed). */
  done: Promise<void>;
}

let runtimeInstalled = false;

/**
 * The worker: runs the reconcilers' workflow and activities, and the simulated cluster (the nodes of
 * LLMGW_SIM_CLUSTER; `demoCluster`: the built-in demo cluster when it is unset) while it holds the
 * sim-cluster lease, which one worker of the store holds at a time. Temporal's namespace gets
 * llmgw's search attributes first (or this throws the sentence saying how). Every model in the store gets
 * its reconciler started (signalWithStart), so none is missing after any restart, and every
 * LLMGW_RECONCILER_CHECK_S those that stopped since are started again.
 */
export async function startWorker(options: {
  config: Config;
  sql: Sql;
  temporalAddress: string;
  demoCluster?: boolean;
  log?: Pick<Console, 'info' | 'warn' | 'error'>;
}): Promise<RunningWorker> {
  const { config, sql } = options;
  const log = options.log ?? console;
  await loadSimCluster(sql, {
    file: config.simClusterFile,
    demoWhenUnset: options.demoCluster ?? false,
    log,
  });
  const clientConnection = await Connection.connect({
    address: options.temporalAddress,
    ...temporalAuth(config.temporalKey),
  });
  await ensureSearchAttributes(clientConnection.operatorService, config.temporalNamespace, log).catch(
    async (error) => {
      await clientConnection.close();
      throw error;
    },
  );
  if (!runtimeInstalled) {
    // Keep Temporal core's own logs to warnings; ours say what matters. Shutdown on signals is ours.
    Runtime.install({ logger: new DefaultLogger('WARN'), shutdownSignals: [] });
    runtimeInstalled = true;
  }
  const metrics = workerMetrics();
  // A lone worker's metrics; in `llmgw dev` the API's /metrics shows them.
  const metricsServer = config.metricsPort
    ? await serveMetrics(processMetrics.registry, config.host, config.metricsPort)
    : null;
  const client = new Client({ connection: clientConnection, namespace: config.temporalNamespace });
  const reconcilers = temporalReconcilers(client, config.taskQueue, log);
  const serving = new SimServing(sql, new LoadSignals(sql, reconcilers, config.policy), log);
  const sim = new SimCluster(
    sql,
    reconcilers,
    { startDelayMs: config.simStartDelayMs, drainGraceMs: config.drainGraceMs },
    log,
    serving,
  );
  const policyCache = new PolicyCache(() => readQuotaPolicy(sql), Math.min(30_000, config.resyncMs), {
    onRead: metrics.policyCacheEvents.onRead,
    onStale: (error, ageMs) => {
      metrics.policyCacheEvents.onStale(error, ageMs);
      log.warn(
        `the store failed (${String(error)}); keeping the quota policy read ${Math.round(ageMs / 1000)} s ago`,
      );
    },
  });
  const connection = await NativeConnection.connect({
    address: options.temporalAddress,
    ...temporalAuth(config.temporalKey),
  });
  // The agents' driver starts its workflows through the worker's own connection, so that they can start eagerly.
  const agentClient = new Client({ connection, namespace: config.temporalNamespace });
  const worker = await Worker.create({
    connection,
    namespace: config.temporalNamespace,
    taskQueue: config.taskQueue,
    workflowsPath: WORKFLOWS,
    // Each reconciler kept in memory costs about 0.35 MB (bench/idle); one that is not replays at its next pass.
    maxCachedWorkflows: config.workflowCache,
    activities: metrics.countStoreErrors(
      createActivities({
        sql,
        driver: new DriverByNode(sql, {
          sim,
          agent: new AgentDriver(sql, agentClient, { ...config, eagerStart: true }),
        }),
        policyCache,
        config,
        // Room freed on an agent's node may be what a reservation there waits for.
        onReplicaSettled: async (model, node, state) => {
          const freed = state === 'failed' || state === 'crashed' || state === 'stopped';
          await reconcilers.tell(
            [model, ...(freed ? await modelsWaitingOn(sql, node) : [])],
            'replicaChanged',
          );
        },
        ...metrics.activityHooks,
      }),
    ),
  });
  const done = worker.run();
  const name = `worker ${hostname()}:${process.pid}`;
  // The lease's holder also loses silent agents' nodes: one check in the whole control plane.
  const nodeWatch = new NodeWatch(sql, reconcilers, config.nodeLostMs, log);
  const leading = {
    run: () => {
      sim.run();
      nodeWatch.run();
    },
    stop: async () => {
      await Promise.all([sim.stop(), nodeWatch.stop()]);
    },
  };
  const simLease = new Lease(
    sql,
    'simCluster',
    new SimClusterLeader(leading, name, metrics.onSimClusterLeader, log),
    {
      name: `llmgw ${name}`,
      log,
    },
  );
  const models = await listModels(sql);
  await reconcilers.tell(
    models.map((model) => model.name),
    'specChanged',
  );
  const watch = watchReconcilers({
    sql,
    reconcilers,
    periodMs: config.reconcilerCheckMs,
    onRestarted: metrics.onReconcilersRestarted,
    log,
  });
  let stopping: Promise<void> | null = null;
  return {
    done,
    stop: () => {
      stopping ??= (async () => {
        await watch.stop();
        await simLease.stop();
        worker.shutdown();
        await done.catch(() => {});
        await connection.close();
        await clientConnection.close();
        await metricsServer?.close();
      })();
      return stopping;
    },
  };
}
