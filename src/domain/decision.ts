import type { Resources } from './resources.ts';
import type { ScopeKey } from './scope.ts';

/**
 * - place: start a new replica of `profile` on `node`.
 * - reclaim: drain `victims` (borrowed replicas) and reserve the room on `node` for a new replica of `profile`.
 * - remove: drain and stop `replica` (scale down).
 * - none: nothing to do (or nothing possible: then `pending` says why).
 */
export type DecisionAction = 'place' | 'reclaim' | 'remove' | 'none';

export interface Victim {
  replica: string;
  model: string;
  owner: ScopeKey | null;
  node: string;
  resources: Resources;
}

/** Why a profile was passed over in this pass. */
export interface ProfileRejection {
  profile: string;
  why: string;
}

export interface DecisionInputs {
  /** Requests in flight (running + waiting); null when the load is unknown (stale or never reported). */
  in_flight: number | null;
  /** Sum of the concurrency at SLO of pending, starting and ready replicas. */
  capacity_at_slo: number;
  replicas: number;
  min_replicas: number;
  max_replicas: number;
  target_tokens_per_sec?: number;
  /** Measured throughput of the serving replicas (tokens/s). */
  tokens_per_sec: number;
  /** Quota figures of the owner's chain that mattered. */
  quotas: { scope: ScopeKey; name: string; guarantee?: Resources; limit?: Resources; holds: Resources }[];
}

export interface Decision {
  model: string;
  action: DecisionAction;
  /** One sentence a person can read, e.g. "scale up: 34 in flight > 30 at SLO on 3 replicas; placed ...". */
  reason: string;
  /** Set when the model needs more than it could get: "no room", "limit of team Acme / ml", "max_replicas". */
  pending?: string;
  profile?: string;
  node?: string;
  /** Resources the new replica will hold (place, reclaim). */
  resources?: Resources;
  /** The replica to take back (remove). */
  replica?: string;
  /** Borrowed replicas to drain (reclaim). */
  victims?: Victim[];
  /** The scope within whose guarantee the reclaim happens (reclaim). */
  reclaim_for?: ScopeKey;
  rejected: ProfileRejection[];
  inputs: DecisionInputs;
  /** The model's memory after this decision. */
  memory: { scaleDownSince: number | null };
}
