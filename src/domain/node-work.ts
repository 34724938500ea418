// What a node's agent runs for the control plane, as the workflows and the agent both name it. Shared by
// the workflow bundle and the agent: types and names only, no I/O.
import type { Profile } from './model.ts';
import type { RuntimeSpec } from './runtime.ts';

/** The task queue an agent's worker polls: Temporal carries its node's work to it and to no other. */
export const nodeTaskQueue = (node: string) => `llmgw-node:${node}`;

/** One replica to run on a node, as the control plane names it. */
export interface ReplicaToRun {
  replica: string;
  model: string;
  profile: Pick<Profile, 'name' | 'resources' | 'engine' | 'runtime' | 'params' | 'default_concurrency'>;
  /** The runtime the profile names, as its admin defined it when the start was asked: the agent resolves it. */
  runtime?: RuntimeSpec & { name: string };
}

/** The activities an agent's worker runs on its node's task queue. */
export interface NodeActivities {
  /**
   * Runs the replica's engine and resolves with its port once it is ready; heartbeats meanwhile. The
   * control plane builds its endpoint from the node's own address (never the agent's word).
   */
  startEngine(input: ReplicaToRun): Promise<{ port: number }>;
  /** Stops the replica's engine: SIGTERM, then SIGKILL after 10 s. Nothing running is no error. */
  stopEngine(input: { replica: string }): Promise<void>;
  /** The last `tail` lines of the replica's engine log (kept after its engine ends). */
  engineLog(input: { replica: string; tail: number }): Promise<string[]>;
}

/** What the start or the drain of one replica on an agent's node needs. */
export interface ReplicaOnNodeInput {
  op: 'start' | 'drain';
  node: string;
  run: ReplicaToRun;
  /** The engine's start timeout (the profile's start_timeout_s, or the default). */
  startTimeoutS: number;
  /** How long an agent may be silent before its node is lost: a start no agent takes within it fails. */
  nodeLostS: number;
  /** drain: how long the replica serves its in-flight requests before its engine is stopped. */
  graceS: number;
}

/** One workflow per replica and step: its ID is the step's idempotency key (a retried start starts nothing twice). */
export const replicaOnNodeId = (op: ReplicaOnNodeInput['op'], replica: string) => `replica-${op}:${replica}`;

/** What GET /api/v1/replicas/{id}/logs asks of the replica's node. */
export interface ReplicaLogsInput {
  node: string;
  replica: string;
  tail: number;
}
