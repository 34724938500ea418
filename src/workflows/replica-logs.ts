import { proxyActivities } from '@temporalio/workflow';
import { type NodeActivities, nodeTaskQueue, type ReplicaLogsInput } from '../domain/node-work.ts';

/**
 * Reads the end of a replica's engine log on its node, for GET /api/v1/replicas/{id}/logs. A workflow
 * because Temporal reaches an activity only through one, and its task queue is the one way into a node:
 * the control plane never dials an agent (nodes open no port of their own). A node whose agent does
 * not take it within 5 s is answered as unreachable, not waited for.
 */
export async function replicaLogs(input: ReplicaLogsInput): Promise<string[]> {
  const node = proxyActivities<Pick<NodeActivities, 'engineLog'>>({
    taskQueue: nodeTaskQueue(input.node),
    scheduleToStartTimeout: '5 seconds',
    startToCloseTimeout: '10 seconds',
    retry: { maximumAttempts: 1 },
  });
  return node.engineLog({ replica: input.replica, tail: input.tail });
}
