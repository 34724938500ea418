import type { Client } from '@temporalio/client';
import type { Config } from '../../config.ts';
import type { Reconcilers } from '../../reconcilers/client.ts';
import type { Sql } from '../../store/db.ts';
import { kubernetesClients } from './client.ts';
import type { KubernetesConfig } from './config.ts';
import { KubernetesDriver } from './driver.ts';
import { KubernetesSync } from './node-sync.ts';
import { podActivities } from './pod-activities.ts';
import { PodWatch } from './pod-watch.ts';

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
  return {
    driver: new KubernetesDriver(deps.sql, deps.client, deps.config),
    activities: podActivities(api, watch, {
      namespace: kubernetes.namespace,
      images: kubernetes.images,
      drainGraceS: deps.config.drainGraceMs / 1000,
    }),
    sync: new KubernetesSync(deps.sql, api, watcher, deps.reconcilers, kubernetes, deps.log),
    stop: () => watch.stop(),
  };
}
