import type { Client } from '@temporalio/client';
import type { Replica } from '../../domain/cluster.ts';
import type { ClusterDriver } from '../../domain/cluster-driver.ts';
import type { ReplicaOnKubernetesInput } from '../../domain/kubernetes-work.ts';
import type { Sql } from '../../store/db.ts';
import { replicaRun, startStep } from '../replica-step.ts';

/**
 * Runs the replicas of Kubernetes nodes as pods: each start and each drain is a workflow of its own
 * (workflows/replica-on-kubernetes.ts), started and not awaited, on the control plane's task queue.
 * Its ID is the replica's and the step's, never reused, as the agent driver's: a retried activity or a
 * worker that crashed mid-call starts nothing twice, and the pod's name is the replica's besides.
 */
export class KubernetesDriver implements ClusterDriver {
  constructor(
    private readonly sql: Sql,
    private readonly client: Client,
    private readonly options: { taskQueue: string; drainGraceMs: number },
  ) {}

  start(replica: Replica): Promise<void> {
    return this.dispatch('start', replica);
  }

  drain(replica: Replica): Promise<void> {
    return this.dispatch('drain', replica);
  }

  private async dispatch(op: ReplicaOnKubernetesInput['op'], replica: Replica): Promise<void> {
    const run = await replicaRun(this.sql, replica);
    // A model removed meanwhile with its pods (orphans: node-sync.ts deletes them): nothing to start.
    if (!run) return;
    const input: ReplicaOnKubernetesInput = {
      op,
      node: replica.node,
      ...run,
      graceS: this.options.drainGraceMs / 1000,
    };
    await startStep(this.client, 'replicaOnKubernetes', input, this.options);
  }
}
