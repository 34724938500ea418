import type { BurstHeadroom, GrowthMemory, RisingBurst } from './growth.ts';
import type { Dimension, Resources } from './resources.ts';
import type { ScopeKey } from './scope.ts';

/**
 * - place: start a new replica of `profile` on `node`.
 * - reclaim: drain `victims` (borrowed replicas) and reserve the room on `node` for a new replica of `profile`.
 * - preempt: drain `victims` (replicas of a strictly lower claim) and reserve the room on `node` for a
 *   new replica of `profile`, which starts once they have stopped; `preempt_limit` names the scope
 *   whose limit blocked it (absent when missing room did).
 * - remove: drain and stop `replica` (scale down).
 * - none: nothing to do (or nothing possible: then `pending` says why).
 */
export type DecisionAction = 'place' | 'reclaim' | 'preempt' | 'remove' | 'none';

/** Actions that reserve under the lock (a replica, victims, or both) before anything else happens. */
export const RESERVING_ACTIONS: readonly DecisionAction[] = ['place', 'reclaim', 'preempt'];

/**
 * Tier of a model's k-th serving replica (oldest first): floor while k <= min_replicas, demand while
 * its load, target throughput or min needs it, surplus otherwise.
 */
export const TIERS = ['surplus', 'demand', 'floor'] as const;
export type Tier = (typeof TIERS)[number];

/**
 * What a replica may keep against other models (POLICY.md "Priority and fair sharing among models"):
 * compared by model priority, then tier, then (in the floor tier) `k`, the lower the stronger.
 */
export interface Claim {
  priority: number;
  tier: Tier;
  /** The replica's place among its model's serving replicas, oldest first (1-based). */
  k: number;
  /** The model's min_replicas, which the floor tier counts against ("floor 1 of 2"). */
  of: number;
}

export interface Victim {
  replica: string;
  model: string;
  owner: ScopeKey | null;
  node: string;
  resources: Resources;
  /** Its claim when it was preempted (absent for a reclaim). */
  claim?: Claim;
}

/** Why a profile was passed over in this pass. */
export interface ProfileRejection {
  profile: string;
  why: string;
}

/**
 * One thing a pending model waits for. The code is a bounded label (metrics, alerts and the console
 * read it); the other fields are what its sentence names.
 * - no_room: no node has room for the profile, and its owner cannot reclaim for it;
 * - limit: the limit of `scope` on `resource` stops the profile;
 * - backoff: the profile is backed off after failed starts or crashes;
 * - unmeasured: only a target throughput asks, and the profile is not measured;
 * - slo_unmet: the profile was measured as unable to meet its SLO;
 * - preempted: replicas preempted for the model still drain: its replica of `profile` waits for them
 *   (under the limit of `scope`, when one stops it);
 * - yields: the limit of `scope` has room for the profile, but not beside the replicas that models of a
 *   higher claim under it wait for: it is left to them, `to` the first (docs/policy.md "Fair shares
 *   from the first placement");
 * - max_replicas: the model runs its maximum;
 * - no_profile: the model has none.
 */
export type Pending =
  | { code: 'no_room'; profile: string; needs: Resources }
  | { code: 'limit'; profile: string; scope: ScopeKey; scope_label: string; resource: Dimension }
  | { code: 'preempted'; profile: string; replicas: number; scope?: ScopeKey; scope_label?: string }
  | { code: 'backoff' | 'unmeasured' | 'slo_unmet'; profile: string }
  | { code: 'yields'; profile: string; to: string; scope: ScopeKey; scope_label: string }
  | { code: 'max_replicas'; max_replicas: number }
  | { code: 'no_profile' };

export type PendingCode = Pending['code'];

const CODES: Record<PendingCode, true> = {
  no_room: true,
  limit: true,
  backoff: true,
  unmeasured: true,
  slo_unmet: true,
  preempted: true,
  yields: true,
  max_replicas: true,
  no_profile: true,
};

/** Whether a stored value is a code this version knows (a decision stored by an earlier one holds none). */
export const isPendingCode = (value: unknown): value is PendingCode =>
  typeof value === 'string' && Object.hasOwn(CODES, value);

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
  /**
   * The burst the decision weighed (docs/policy.md "Headroom for bursts"): the room kept for the rises
   * the model showed, or the rise a spare replica is placed for. Absent when none did.
   */
  burst?: BurstHeadroom | RisingBurst;
}

export interface Decision {
  model: string;
  action: DecisionAction;
  /** One sentence a person can read, e.g. "scale up: 34 in flight > 30 at SLO on 3 replicas; placed ...". */
  reason: string;
  /**
   * Set when the model needs more than it could get: each thing it waits for, as a code (one per
   * profile passed over, or one for the model). `reason` says the same in words (policy/explain.ts).
   */
  pending?: Pending[];
  profile?: string;
  node?: string;
  /** Resources the new replica will hold (place, reclaim). */
  resources?: Resources;
  /** The replica to take back (remove). */
  replica?: string;
  /** Replicas to drain: borrowed ones (reclaim), or ones of a strictly lower claim (preempt). */
  victims?: Victim[];
  /** The scope within whose guarantee the reclaim happens (reclaim). */
  reclaim_for?: ScopeKey;
  /** The scope whose limit the preemption makes room under (absent when it makes room on a node). */
  preempt_limit?: ScopeKey;
  /** The claim of the new replica the preemption is for (preempt). */
  claim?: Claim;
  rejected: ProfileRejection[];
  inputs: DecisionInputs;
  /** The model's memory after this decision. */
  memory: { scaleDownSince: number | null; scaleDownPeak?: number; growth?: GrowthMemory };
}
