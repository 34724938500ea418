import type { Resources } from './resources.ts';
import type { ScopeKey } from './scope.ts';

/**
 * Whether the models under a scope may preempt replicas of a strictly lower claim when a limit or
 * missing room blocks them ('lower-claim', the default), or wait ('never').
 */
export const PREEMPTION_SETTINGS = ['never', 'lower-claim'] as const;
export type Preemption = (typeof PREEMPTION_SETTINGS)[number];

/** Guaranteed and limited capacity of one scope; either may be absent. */
export interface Quota {
  scope: ScopeKey;
  guarantee?: Resources;
  limit?: Resources;
  /** Absent means 'lower-claim'. */
  preemption?: Preemption;
  /**
   * The scope's priority among its siblings (POLICY.md "Priority nests"); absent means 0. It is on the
   * quota so that only whoever may change the quota sets it: an admin for an org, the operator of the
   * scope above for a team or a project.
   */
  priority?: number;
}
