import { ActivityFailure, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../activities/types.ts';
import type { PodActivities, ReplicaOnKubernetesInput } from '../domain/kubernetes-work.ts';

const controlPlane = proxyActivities<Pick<Activities, 'settleReplica'>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
});

/** A pod activity heartbeats every 5 s (cluster/kubernetes/pod-activities.ts): three missed, its worker is gone. */
const HEARTBEAT_TIMEOUT = '15 seconds';

/**
 * Starts or drains one replica of a Kubernetes node as a pod, as replicaOnNode does on an agent's node:
 * the pod work runs as activities on the control plane's task queue (the worker that runs them may die;
 * another retries them, and the pod's name makes the retry find the same pod), and what came of it is
 * recorded. A pod that kube-scheduler cannot fit, or that never gets Ready, is a failed start: its pod
 * is deleted and the reconciler plans again, its decision saying why.
 */
export async function replicaOnKubernetes(input: ReplicaOnKubernetesInput): Promise<void> {
  const { node, run } = input;
  const replicaId = run.replica;
  const pods = proxyActivities<PodActivities>({
    startToCloseTimeout: `${(input.op === 'start' ? input.startTimeoutS : input.graceS) + 60} seconds`,
    heartbeatTimeout: HEARTBEAT_TIMEOUT,
    retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['PodRefused', 'PodGone'] },
  });
  if (input.op === 'drain') {
    // Out of routing already (draining): the pod's grace period is its in-flight requests' time.
    await pods.deletePod({ replica: replicaId, graceS: input.graceS });
    await controlPlane.settleReplica({ replicaId, node, report: { state: 'stopped' } });
    return;
  }
  try {
    const { address, port } = await pods.startPod(input);
    await controlPlane.settleReplica({
      replicaId,
      node,
      report: { state: 'ready', port },
      podAddress: address,
    });
  } catch (error) {
    if (!(error instanceof ActivityFailure)) throw error;
    await pods.deletePod({ replica: replicaId, graceS: 0 });
    await controlPlane.settleReplica({
      replicaId,
      node,
      report: { state: 'failed', reason: error.cause?.message ?? error.message },
    });
  }
}
