import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { DEFAULT_START_TIMEOUT_S } from '../contracts/schemas/engine.ts';
import type { Replica } from '../domain/cluster.ts';
import type { ClusterDriver } from '../domain/cluster-driver.ts';
import { type ReplicaOnNodeInput, replicaOnNodeId } from '../domain/node-work.ts';
import type { Runtime } from '../domain/runtime.ts';
import type { Sql } from '../store/db.ts';
import { getModel } from '../store/models.ts';
import { getRuntime } from '../store/runtimes.ts';
import type { replicaOnNode } from '../workflows/replica-on-node.ts';

/**
 * Runs the replicas of agents' nodes: each start and each drain is a workflow of its own
 * (workflows/replica-on-node.ts) whose engine work Temporal carries to the node's agent. Started, not
 * awaited: the reconciler's pass goes on while an engine starts. The workflow's ID is the replica and
 * the step, never reused, so a retried activity or a worker that crashed mid-call starts nothing twice.
 */
export class AgentDriver implements ClusterDriver {
  constructor(
    private readonly sql: Sql,
    private readonly client: Client,
    private readonly options: {
      taskQueue: string;
      nodeLostMs: number;
      drainGraceMs: number;
      /**
       * Asks Temporal to hand the workflow's first task back with the start, to this process's worker
       * (eager start), rather than through the task queue: the client must share the worker's
       * NativeConnection (src/cli/worker.ts). On a loaded machine that task's dispatch took some 0.3 s
       * of each engine start (bench/agent-start). A server that declines starts it as usual.
       */
      eagerStart?: boolean;
    },
  ) {}

  start(replica: Replica): Promise<void> {
    return this.dispatch('start', replica);
  }

  drain(replica: Replica): Promise<void> {
    return this.dispatch('drain', replica);
  }

  private async dispatch(op: ReplicaOnNodeInput['op'], replica: Replica): Promise<void> {
    const profile = (await getModel(this.sql, replica.model))?.profiles.find(
      (p) => p.name === replica.profile,
    );
    // A model removed meanwhile: its replicas are drained by its deletion, nothing is left to start.
    if (!profile) return;
    // The runtime as its admin defines it now: the agent checks the parameters against it and fills it in.
    const runtime = profile.runtime === undefined ? undefined : await getRuntime(this.sql, profile.runtime);
    const input: ReplicaOnNodeInput = {
      op,
      node: replica.node,
      run: {
        replica: replica.id,
        model: replica.model,
        profile,
        ...(runtime && { runtime: runtimeSpec(runtime) }),
      },
      startTimeoutS: Number((runtime ?? profile.engine)?.start_timeout_s ?? DEFAULT_START_TIMEOUT_S),
      nodeLostS: this.options.nodeLostMs / 1000,
      graceS: this.options.drainGraceMs / 1000,
    };
    try {
      await this.client.workflow.start<typeof replicaOnNode>('replicaOnNode', {
        taskQueue: this.options.taskQueue,
        workflowId: replicaOnNodeId(op, replica.id),
        workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
        args: [input],
        ...(this.options.eagerStart && { requestEagerStart: true }),
      });
    } catch (error) {
      if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
    }
  }
}

/** What an agent needs of a runtime: its definition and name, not who changed it when. */
const runtimeSpec = ({ updated_by: _by, updated_at: _at, ...spec }: Runtime) => spec;
