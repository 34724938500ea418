import { type Client, WorkflowFailedError } from '@temporalio/client';
import type { ReplicaLogsInput } from '../domain/node-work.ts';
import type { replicaLogs } from '../workflows/replica-logs.ts';

/** How the API reads a replica's engine log: through its node's agent, carried by Temporal. */
export type ReplicaLogReader = (input: ReplicaLogsInput) => Promise<string[]>;

/** The log's end, or a sentence saying the node's agent did not answer. */
export function temporalReplicaLogs(client: Client, taskQueue: string): ReplicaLogReader {
  return async (input) => {
    try {
      return await client.workflow.execute<typeof replicaLogs>('replicaLogs', {
        taskQueue,
        workflowId: `replica-logs:${input.replica}:${Date.now()}`,
        args: [input],
        workflowExecutionTimeout: '30 seconds',
      });
    } catch (error) {
      if (error instanceof WorkflowFailedError) throw new NodeUnreachable(input.node);
      throw error;
    }
  };
}

/** The node's agent did not take or answer the read in time (it is stopped, or lost). */
export class NodeUnreachable extends Error {
  constructor(readonly node: string) {
    super(`node ${node}'s agent did not answer; its replicas' logs are on the node (LLMGW_AGENT_HOME/logs)`);
  }
}
