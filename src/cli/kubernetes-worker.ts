import type { Client } from '@temporalio/client';
import { engineCommand } from '../agent/engine-command.ts';
import { type EngineLoad, scrapeLoad } from '../agent/engine-metrics.ts';
import { kubernetesClients } from '../cluster/kubernetes/client.ts';
import { KubernetesDriver } from '../cluster/kubernetes/driver.ts';
import { KubernetesSync } from '../cluster/kubernetes/node-sync.ts';
import { podActivities } from '../cluster/kubernetes/pod-activities.ts';
import { PodWatch } from '../cluster/kubernetes/pod-watch.ts';
import type { Config } from '../config.ts';
import type { KubernetesConfig } from '../domain/kubernetes-config.ts';
import type { Reconcilers } from '../reconcilers/client.ts';
import { LoadSignals } from '../reconcilers/load-signals.ts';
import type { Sql } from '../store/db.ts';
import { getModel } from '../store/models.ts';
import { getReplica } from '../store/replicas.ts';

/**
 * What a worker given a Kubernetes cluster (LLMGW_KUBERNETES) runs: the driver that starts each pod's
 * workflow, the pod activities any worker runs (with their one watch of llmgw's pods), and the sync
 * that the lease's holder runs (nodes and orphans).
 */
export function kubernetesWorkerParts(
  kubernetes: KubernetesConfig,
  deps: {
    sql: Sql;
    client: Client;
    reconcilers: Reconcilers;
    config: Pick<Config, 'taskQueue' | 'drainGraceMs' | 'policy'>;
    log: Pick<Console, 'info' | 'warn'>;
  },
) {
  const { api, watcher } = kubernetesClients(kubernetes);
  const watch = new PodWatch(api, watcher, kubernetes.namespace, deps.log);
  const driver = new KubernetesDriver(deps.sql, deps.client, deps.config);
  return {
    driver,
    activities: podActivities(api, watch, {
      namespace: kubernetes.namespace,
      images: kubernetes.images,
      drainGraceS: deps.config.drainGraceMs / 1000,
      engineCommand,
    }),
    sync: new KubernetesSync(
      deps.sql,
      api,
      watcher,
      deps.reconcilers,
      driver,
      { ...kubernetes, reportLoad: engineLoadReporter(deps), scrapeLoad },
      deps.log,
    ),
    stop: () => watch.stop(),
  };
}

/**
 * Where a load scraped from a pod's engine goes: its model's load, under the source an agent's scrape
 * of the same replica uses (replica:<id>), so one engine is one source wherever it runs.
 */
export function engineLoadReporter(deps: {
  sql: Sql;
  reconcilers: Reconcilers;
  config: Pick<Config, 'policy'>;
  log: Pick<Console, 'warn'>;
}): (replica: string, load: EngineLoad) => Promise<void> {
  const signals = new LoadSignals(deps.sql, deps.reconcilers, deps.config.policy, Date.now, deps.log);
  return async (id, load) => {
    const replica = await getReplica(deps.sql, id);
    const model = replica && (await getModel(deps.sql, replica.model));
    if (model) await signals.report(model, `replica:${id}`, load.running, load.waiting);
  };
}
