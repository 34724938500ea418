import { ActivityFailure, proxyActivities, sleep, TimeoutFailure } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import { type NodeActivities, nodeTaskQueue, type ReplicaOnNodeInput } from '../domain/node-work.ts';

const controlPlane = proxyActivities<Pick<Activities, 'settleReplica'>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** Beyond a stop's SIGTERM-then-SIGKILL (10 s): what a stop may take on a loaded machine. */
const STOP_TIMEOUT = '60 seconds';
/** An agent heartbeats a start this often (src/agent/node-activities.ts): three missed, it is gone. */
const HEARTBEAT_TIMEOUT = '15 seconds';

/**
 * Starts or drains one replica of an agent's node: the engine work runs as an activity on the node's
 * own task queue (llmgw-node:<name>), and what came of it is recorded by the control plane. The
 * reconciler's activities start this workflow and do not wait for it, so a long engine start blocks
 * no reconciler. A start no agent takes within the node-lost window fails, rather than wait forever.
 */
export async function replicaOnNode(input: ReplicaOnNodeInput): Promise<void> {
  const { node, run } = input;
  const replicaId = run.replica;
  const agent = proxyActivities<NodeActivities>({
    taskQueue: nodeTaskQueue(node),
    scheduleToStartTimeout: `${input.nodeLostS + 10} seconds`,
    startToCloseTimeout: `${input.op === 'start' ? input.startTimeoutS + 30 : 60} seconds`,
    heartbeatTimeout: input.op === 'start' ? HEARTBEAT_TIMEOUT : STOP_TIMEOUT,
    // The engine's own failure is the answer (the start backoff decides what next); a lost agent, retried.
    retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['EngineFailed'] },
  });
  if (input.op === 'drain') {
    // Out of routing already (draining); its in-flight requests have the grace period.
    await sleep(`${input.graceS} seconds`);
    await agent.stopEngine({ replica: replicaId });
    await controlPlane.settleReplica({ replicaId, node, report: { state: 'stopped' } });
    return;
  }
  try {
    const { port } = await agent.startEngine(run);
    await controlPlane.settleReplica({ replicaId, node, report: { state: 'ready', port } });
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    await controlPlane.settleReplica({
      replicaId,
      node,
      report: { state: 'failed', reason: whyFailed(error, node) },
    });
  }
}

/** The engine's own sentence (exit code and last log lines), or that no agent took the start. */
function whyFailed(error: ActivityFailure, node: string): string {
  const cause = error.cause;
  if (cause instanceof TimeoutFailure && cause.timeoutType === 'SCHEDULE_TO_START') {
    return `no agent of node ${node} took the start in time`;
  }
  return cause?.message ?? error.message;
}
