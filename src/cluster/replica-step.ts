import { type Client, WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import { WorkflowIdReusePolicy } from '@temporalio/common';
import { DEFAULT_START_TIMEOUT_S } from '../contracts/schemas/engine.ts';
import type { Replica } from '../domain/cluster.ts';
import { type ReplicaToRun, replicaOnNodeId } from '../domain/node-work.ts';
import type { Runtime } from '../domain/runtime.ts';
import type { Sql } from '../store/db.ts';
import { getModel } from '../store/models.ts';
import { getRuntime } from '../store/runtimes.ts';
import type { replicaOnKubernetes } from '../workflows/replica-on-kubernetes.ts';
import type { replicaOnNode } from '../workflows/replica-on-node.ts';

// What the drivers of real nodes (agent-driver.ts, kubernetes/driver.ts) do alike for a replica's start
// or drain: the run it carries, read from the store, and its workflow started once.

/** A replica's run as a start or a drain carries it, with what of its model the drivers add. */
export interface ReplicaRun {
  run: ReplicaToRun;
  /** The model's owner scope, null for none. */
  owner: string | null;
  /** The engine's start timeout: its runtime's start_timeout_s, else its engine's, else the default. */
  startTimeoutS: number;
}

/**
 * The replica's run as its model, profile and runtime are now: the runtime as its admin defines it, which
 * the agent (or the pod's command line) checks the parameters against and fills in. Undefined when its
 * model or profile was removed meanwhile: the removal ends its replicas, nothing is left to start.
 */
export async function replicaRun(sql: Sql, replica: Replica): Promise<ReplicaRun | undefined> {
  const model = await getModel(sql, replica.model);
  const profile = model?.profiles.find((p) => p.name === replica.profile);
  if (!model || !profile) return undefined;
  const runtime = profile.runtime === undefined ? undefined : await getRuntime(sql, profile.runtime);
  return {
    run: {
      replica: replica.id,
      model: replica.model,
      profile,
      ...(runtime && { runtime: runtimeSpec(runtime) }),
    },
    owner: model.owner,
    startTimeoutS: Number((runtime ?? profile.engine)?.start_timeout_s ?? DEFAULT_START_TIMEOUT_S),
  };
}

/** What an agent (or a pod) needs of a runtime: its definition and name, not who changed it when. */
export const runtimeSpec = ({ updated_by: _by, updated_at: _at, ...spec }: Runtime) => spec;

/** The workflows of a replica's step, by their type's name. */
interface Steps {
  replicaOnNode: typeof replicaOnNode;
  replicaOnKubernetes: typeof replicaOnKubernetes;
}

/**
 * Starts the step's workflow and does not await it. Its ID is the replica's and the step's, never
 * reused: a retried activity or a worker that crashed mid-call starts nothing twice, and a step already
 * started is no error.
 */
export async function startStep<K extends keyof Steps>(
  client: Client,
  workflowType: K,
  input: Parameters<Steps[K]>[0],
  options: { taskQueue: string; eagerStart?: boolean },
): Promise<void> {
  try {
    // Untyped inside: `Steps` binds each name to its input for the callers, which TypeScript cannot
    // follow through the generic K to the workflow's own parameters.
    await client.workflow.start(workflowType, {
      taskQueue: options.taskQueue,
      workflowId: replicaOnNodeId(input.op, input.run.replica),
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      args: [input],
      ...(options.eagerStart && { requestEagerStart: true }),
    });
  } catch (error) {
    if (!(error instanceof WorkflowExecutionAlreadyStartedError)) throw error;
  }
}
