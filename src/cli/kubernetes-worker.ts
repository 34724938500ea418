import type { Client } from '@temporalio/client';
import { engineCommand } from '../agent/engine-command.ts';
import { kubernetesClients } from '../cluster/kubernetes/client.ts';
import { KubernetesDriver } from '../cluster/kubernetes/driver.ts';
import { KubernetesSync } from '../cluster/kubernetes/node-sync.ts';
import { podActivities } from '../cluster/kubernetes/pod-activities.ts';
import { PodWatch } from '../cluster/kubernetes/pod-watch.ts';
import type { Config } from '../config.ts';
import type { KubernetesConfig } from '../domain/kubernetes-config.ts';
import type { Reconcilers } from '../reconcilers/client.ts';
import type { Sql } from '../store/db.ts';

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
    config: Pick<Config, 'taskQueue' | 'drainGraceMs'>;
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
    sync: new KubernetesSync(deps.sql, api, watcher, deps.reconcilers, driver, kubernetes, deps.log),
    stop: () => watch.stop(),
  };
}
