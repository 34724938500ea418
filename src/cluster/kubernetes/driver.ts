import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { DEFAULT_START_TIMEOUT_S } from '../../contracts/schemas/engine.ts';
import type { Replica } from '../../domain/cluster.ts';
import type { ClusterDriver } from '../../domain/cluster-driver.ts';
import type { ReplicaOnKubernetesInput } from '../../domain/kubernetes-work.ts';
import { replicaOnNodeId } from '../../domain/node-work.ts';
import type { Sql } from '../../store/db.ts';
import { getModel } from '../../store/models.ts';
import { getRuntime } from '../../store/runtimes.ts';
import type { replicaOnKubernetes } from '../../workflows/replica-on-kubernetes.ts';
import { runtimeSpec } from '../agent-driver.ts';

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
    const model = await getModel(this.sql, replica.model);
    const profile = model?.profiles.find((p) => p.name === replica.profile);
    // A model removed meanwhile with its pods (orphans: node-sync.ts deletes them): nothing to start.
    if (!model || !profile) return;
    const runtime = profile.runtime === undefined ? undefined : await getRuntime(this.sql, profile.runtime);
    const input: ReplicaOnKubernetesInput = {
      op,
      node: replica.node,
      run: {
        replica: replica.id,
        model: replica.model,
        profile,
        ...(runtime && { runtime: runtimeSpec(runtime) }),
      },
      owner: model.owner,
      startTimeoutS: Number((runtime ?? profile.engine)?.start_timeout_s ?? DEFAULT_START_TIMEOUT_S),
      graceS: this.options.drainGraceMs / 1000,
    };
    try {
      await this.client.workflow.start<typeof replicaOnKubernetes>('replicaOnKubernetes', {
        taskQueue: this.options.taskQueue,
        workflowId: replicaOnNodeId(op, replica.id),
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        args: [input],
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
}
