import type { Pending, ProfileRejection } from '../domain/decision.ts';
import type { Measurement, Model, Profile } from '../domain/model.ts';
import { scopeLabel } from '../domain/scope-names.ts';
import type { ModelMemory } from '../domain/snapshot.ts';
import { cannotMeetSloWhy, limitSentence, pendingPhrase } from './explain.ts';
import { blockingLimit } from './limits.ts';
import { pickNode } from './placement.ts';
import { cannotMeetSlo } from './profiles.ts';
import { planReclaim, type ReclaimPlan, reclaimingScope } from './reclaim.ts';
import type { View } from './view.ts';

export type ProfileChoice =
  | { action: 'place'; profile: Profile; node: string; rejected: ProfileRejection[] }
  | { action: 'reclaim'; profile: Profile; plan: ReclaimPlan; rejected: ProfileRejection[] }
  /** `pending` says why none fitted: what each profile waits for, or that there is none. */
  | { action: 'none'; pending: Pending[]; rejected: ProfileRejection[] };

interface Rejection extends ProfileRejection {
  /** What this profile waits for. */
  pending: Pending;
}

/**
 * Where the model's next replica goes (POLICY.md "Choosing a profile"). For each profile in trial
 * order: a profile measured as unable to meet its SLO is skipped (it would add no capacity, so any
 * load would scale it to max_replicas); a backed-off profile is skipped; a limit on the chain that
 * blocks it sends on to the next; a node with room takes it; with no room, an owner within its
 * guarantee reclaims for it (before trying the next profile: a guarantee means the owner gets its
 * preferred profile); else the next.
 * `measuredOnly` skips unmeasured profiles when only a target throughput asks for the replica: they
 * add no known throughput, so adding them could never meet the target.
 */
export function chooseProfile(
  view: View,
  model: Model,
  profiles: readonly Profile[],
  memory: ModelMemory,
  measuredOnly: boolean,
): ProfileChoice {
  const rejections: Rejection[] = [];
  const measurements = view.measurementsOf(model.name);
  for (const profile of profiles) {
    const rejection = rejectionOf(view, model, profile, memory, measurements.get(profile.name), measuredOnly);
    if (rejection) {
      rejections.push(rejection);
      continue;
    }
    const rejected = rejections.map(({ profile, why }) => ({ profile, why }));
    const node = pickNode(view, profile);
    if (node) return { action: 'place', profile, node, rejected };
    const plan = planReclaim(view, model, profile);
    if (plan) return { action: 'reclaim', profile, plan, rejected };
    rejections.push(noRoom(view, model, profile));
  }
  return {
    action: 'none',
    pending: rejections.length ? rejections.map((r) => r.pending) : [{ code: 'no_profile' }],
    rejected: rejections.map(({ profile, why }) => ({ profile, why })),
  };
}

/** Why the profile is not even tried on the nodes, or null when it may be. */
function rejectionOf(
  view: View,
  model: Model,
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
      why: `backed off for ${seconds} s more after failed starts`,
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
  const block = blockingLimit(view, model.owner, profile.resources);
  if (block) {
    return {
      profile: profile.name,
      why: limitSentence(view, block, profile.resources),
      pending: {
        code: 'limit',
        profile: profile.name,
        scope: block.scope,
        scope_label: scopeLabel(view.scopes, block.scope),
        resource: block.dimension,
      },
    };
  }
  return null;
}

function noRoom(view: View, model: Model, profile: Profile): Rejection {
  const pending: Pending = { code: 'no_room', profile: profile.name, needs: profile.resources };
  const within = reclaimingScope(view, model.owner, profile.resources);
  const why = within
    ? `${pendingPhrase(pending)} and nothing borrowed to reclaim for ${scopeLabel(view.scopes, within)}`
    : `${pendingPhrase(pending)}, and the owner is not within a guarantee for it, so it waits`;
  return { profile: profile.name, why, pending };
}
