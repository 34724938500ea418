import { ApplicationFailure, Context } from '@temporalio/activity';
import type { NodeActivities } from '../domain/node-work.ts';
import type { NodeEngines } from './node-engines.ts';

/** How often a start under way heartbeats: the workflow's heartbeat timeout is three of these. */
const HEARTBEAT_EVERY_MS = 5_000;

/**
 * The activities an agent's worker runs on its node's task queue. A start heartbeats while its engine
 * comes up (a dead agent is noticed by its heartbeat timeout, and the start tried again elsewhere in
 * time); an engine that fails to start is the answer, not retried: the start backoff decides what next.
 */
export function createNodeActivities(engines: NodeEngines): NodeActivities {
  return {
    async startEngine(input) {
      const beat = setInterval(() => Context.current().heartbeat(), HEARTBEAT_EVERY_MS);
      try {
        return { port: (await engines.start(input)).port };
      } catch (error) {
        throw ApplicationFailure.nonRetryable((error as Error).message, 'EngineFailed');
      } finally {
        clearInterval(beat);
      }
    },

    async stopEngine({ replica }) {
      await engines.stop(replica);
    },

    engineLog: ({ replica, tail }) => engines.supervisor.tail(replica, tail),
  };
}
