import type { Claim, Pending, ProfileRejection } from '../domain/decision.ts';
import type { Measurement, Model, Profile } from '../domain/model.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { scopeLabel } from '../domain/scope-names.ts';
import type { ModelMemory } from '../domain/snapshot.ts';
import { cannotMeetSloWhy, limitSentence, pendingPhrase } from './explain.ts';
import { type BlockingLimit, blockingLimit } from './limits.ts';
import { pickNode } from './placement.ts';
import { blockingRooms, drainingFor, mayPreempt, type PreemptionPlan, planPreemption } from './preempt.ts';
import { cannotMeetSlo } from './profiles.ts';
import { planReclaim, type ReclaimPlan, reclaimingScope } from './reclaim.ts';
import type { View } from './view.ts';

export type ProfileChoice =
  | { action: 'place'; profile: Profile; node: string; rejected: ProfileRejection[] }
  | { action: 'reclaim'; profile: Profile; plan: ReclaimPlan; rejected: ProfileRejection[] }
  | { action: 'preempt'; profile: Profile; plan: PreemptionPlan; rejected: ProfileRejection[] }
  /** `pending` says why none fitted: what each profile waits for, or that there is none. */
  | { action: 'none'; pending: Pending[]; rejected: ProfileRejection[] };

interface Rejection extends ProfileRejection {
  /** What this profile waits for. */
  pending: Pending;
}

/**
 * Where the model's next replica goes (POLICY.md "Choosing a profile" and "Priority and fair sharing
 * among models"). For each profile in trial order: a profile measured as unable to meet its SLO is
 * skipped (it would add no capacity, so any load would scale it to max_replicas); a backed-off profile
 * is skipped; a limit on the chain that blocks it is met by preempting replicas of a lower claim than
 * `claim` under the limiting scope, else sends on to the next; a node with room takes it; with no room,
 * an owner within its guarantee reclaims for it (before trying the next profile: a guarantee means the
 * owner gets its preferred profile); else it preempts replicas of a lower claim on one node; else the
 * next. A quota that says "never" on the owner's chain turns preemption off.
 * `measuredOnly` skips unmeasured profiles when only a target throughput asks for the replica: they
 * add no known throughput, so adding them could never meet the target.
 * `yields` says when a profile that a node has room for leaves that room to models of a higher claim
 * (policy/fairness.ts): it is passed over like one a limit stops.
 */
export function chooseProfile(
  view: View,
  model: Model,
  profiles: readonly Profile[],
  memory: ModelMemory,
  measuredOnly: boolean,
  claim: Claim,
  yields: (profile: Profile) => Pending | null = () => null,
): ProfileChoice {
  const rejections: Rejection[] = [];
  const measurements = view.measurementsOf(model.name);
  const preempting = mayPreempt(view, model.owner);
  for (const profile of profiles) {
    const rejection = rejectionOf(view, profile, memory, measurements.get(profile.name), measuredOnly);
    if (rejection) {
      rejections.push(rejection);
      continue;
    }
    const rejected = rejections.map(({ profile, why }) => ({ profile, why }));
    const block = blockingLimit(view, model.owner, profile.resources);
    if (block) {
      const waiting = waitingForPreempted(view, model, profile, block.scope);
      if (waiting) {
        // Room preempted for this profile is on its way: taking another profile would waste it.
        rejections.push(waiting);
        break;
      }
      const plan = preempting && planPreemption(view, model, profile, claim);
      if (plan) return { action: 'preempt', profile, plan, rejected };
      rejections.push(limited(view, profile, block));
      continue;
    }
    const node = pickNode(view, profile);
    if (node) {
      const yielding = yields(profile);
      if (!yielding) return { action: 'place', profile, node, rejected };
      rejections.push({ profile: profile.name, why: pendingPhrase(yielding), pending: yielding });
      continue;
    }
    const reclaim = planReclaim(view, model, profile, claim);
    if (reclaim) return { action: 'reclaim', profile, plan: reclaim, rejected };
    const plan = preempting && planPreemption(view, model, profile, claim);
    if (plan) return { action: 'preempt', profile, plan, rejected };
    rejections.push(noRoom(view, model, profile));
  }
  return {
    action: 'none',
    pending: rejections.length ? rejections.map((r) => r.pending) : [{ code: 'no_profile' }],
    rejected: rejections.map(({ profile, why }) => ({ profile, why })),
  };
}

/**
 * Why the profile is not even tried against limits and nodes, or null when it may be (policy/fairness.ts
 * asks it of the models a replica might yield to).
 */
export function rejectionOf(
  view: View,
  profile: Profile,
  memory: ModelMemory,
  measurement: Measurement | undefined,
  measuredOnly: boolean,
): Rejection | null {
  if (cannotMeetSlo(measurement)) {
    return {
      profile: profile.name,
      why: cannotMeetSloWhy,
      pending: { code: 'slo_unmet', profile: profile.name },
    };
  }
  const until = memory.backedOffUntil[profile.name];
  if (until !== undefined && until > view.now) {
    const seconds = Math.ceil((until - view.now) / 1000);
    return {
      profile: profile.name,
      why: `backed off for ${seconds} s more after failed starts or crashes`,
      pending: { code: 'backoff', profile: profile.name },
    };
  }
  if (measuredOnly && !measurement) {
    return {
      profile: profile.name,
      why: 'not measured, so it adds no known throughput toward the target',
      pending: { code: 'unmeasured', profile: profile.name },
    };
  }
  return null;
}

/** A limit stops the profile, and nothing of a lower claim may be preempted for it. */
const limited = (view: View, profile: Profile, block: BlockingLimit): Rejection => ({
  profile: profile.name,
  why: limitSentence(view, block, profile.resources),
  pending: {
    code: 'limit',
    profile: profile.name,
    scope: block.scope,
    scope_label: scopeLabel(view.scopes, block.scope),
    resource: block.dimension,
  },
});

/**
 * The limit of `scope` stops the profile only until replicas preempted for the model have stopped:
 * it waits for them rather than preempting more.
 */
function waitingForPreempted(view: View, model: Model, profile: Profile, scope: ScopeKey): Rejection | null {
  const draining = drainingFor(view, model, scope);
  if (draining.length === 0 || blockingRooms(view, model, profile.resources).size > 0) return null;
  const pending: Pending = {
    code: 'preempted',
    profile: profile.name,
    scope,
    scope_label: scopeLabel(view.scopes, scope),
    replicas: draining.length,
  };
  return { profile: profile.name, why: pendingPhrase(pending), pending };
}

function noRoom(view: View, model: Model, profile: Profile): Rejection {
  const pending: Pending = { code: 'no_room', profile: profile.name, needs: profile.resources };
  const within = reclaimingScope(view, model.owner, profile.resources);
  const why = within
    ? `${pendingPhrase(pending)} and nothing borrowed to reclaim for ${scopeLabel(view.scopes, within)}`
    : `${pendingPhrase(pending)}, and the owner is not within a guarantee for it, so it waits`;
  return { profile: profile.name, why, pending };
}
