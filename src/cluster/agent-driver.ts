import type { Client } from '@temporalio/client';
import type { Replica } from '../domain/cluster.ts';
import type { ClusterDriver } from '../domain/cluster-driver.ts';
import type { ReplicaOnNodeInput } from '../domain/node-work.ts';
import type { Sql } from '../store/db.ts';
import { replicaRun, startStep } from './replica-step.ts';

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
    const step = await replicaRun(this.sql, replica);
    // A model removed meanwhile: its replicas are drained by its deletion, nothing is left to start.
    if (!step) return;
    const input: ReplicaOnNodeInput = {
      op,
      node: replica.node,
      run: step.run,
      startTimeoutS: step.startTimeoutS,
      nodeLostS: this.options.nodeLostMs / 1000,
      graceS: this.options.drainGraceMs / 1000,
    };
    await startStep(this.client, 'replicaOnNode', input, this.options);
  }
}
