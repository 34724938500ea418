import type { Resources } from './resources.ts';

export const NODE_STATES = ['ready', 'cordoned', 'down', 'lost'] as const;
/** `lost`: an agent's node whose agent is silent (LLMGW_NODE_LOST_S); it is ready again once it heartbeats. */
export type NodeState = (typeof NODE_STATES)[number];

/**
 * What runs a node's replicas: the simulated cluster, an `llmgw agent` on the machine, or a Kubernetes
 * cluster (its pods; src/cluster/kubernetes).
 */
export const NODE_DRIVERS = ['sim', 'agent', 'kubernetes'] as const;
export type NodeDriver = (typeof NODE_DRIVERS)[number];

export interface ClusterNode {
  name: string;
  capacity: Resources;
  gpu_model: string | null;
  labels: Record<string, string>;
  state: NodeState;
  /** Absent where only placement matters (the simulator, tests): `sim`. */
  driver?: NodeDriver;
}

/**
 * `failed`: its engine did not start (failed starts back its profile off); `crashed`: its engine ended
 * after it had served (counted and backed off apart from failed starts).
 * `lost`: its node's agent went silent; it holds no room, is replaced elsewhere and is neither a failed
 * start nor a served one for the start backoff.
 */
export const REPLICA_STATES = [
  'pending',
  'starting',
  'ready',
  'draining',
  'stopped',
  'failed',
  'crashed',
  'lost',
] as const;
export type ReplicaState = (typeof REPLICA_STATES)[number];

/** Replicas in these states hold their resources (POLICY.md: from placed until stopped, failed, crashed or lost). */
export const ACTIVE_STATES: readonly ReplicaState[] = ['pending', 'starting', 'ready', 'draining'];
/** Replicas in these states are over: they hold nothing and run nothing. */
export const ENDED_STATES: readonly ReplicaState[] = ['stopped', 'failed', 'crashed', 'lost'];
/** Replicas in these states run an engine on their node: what the machine itself must hold. */
export const RUNNING_STATES: readonly ReplicaState[] = ['starting', 'ready', 'draining'];
/** Replicas in these states count toward a model's capacity at SLO. */
export const SERVING_STATES: readonly ReplicaState[] = ['pending', 'starting', 'ready'];

export interface Replica {
  id: string;
  model: string;
  profile: string;
  node: string;
  resources: Resources;
  state: ReplicaState;
  /** Milliseconds since the epoch; orders replicas oldest first. */
  created_at: number;
  /** Where it serves (its engine's base URL), once its driver knows. */
  endpoint?: string | null;
  /**
   * The model a draining replica was preempted for: that model's reconciler is woken when it stops,
   * its reserved replica starts only then, and it counts the room as its own meanwhile.
   */
  preempted_for?: string | null;
  /**
   * The replica a draining victim was reclaimed or preempted for (reserved in its place): while that
   * one is still pending, the room they share is counted once (policy/holdings.ts countedOnce).
   */
  reclaimed_for?: string | null;
}
