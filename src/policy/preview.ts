import type { Quota } from '../domain/quota.ts';
import type { Resources } from '../domain/resources.ts';
import { scopeLabel } from '../domain/scope-names.ts';
import type { Snapshot } from '../domain/snapshot.ts';
import { nextClaim } from './claims.ts';
import { limitSentence, listing, victimPhrase } from './explain.ts';
import { protection } from './guarantee.ts';
import { blockingLimit } from './limits.ts';
import { modelFigures } from './model-figures.ts';
import { mayPreempt, planPreemption } from './preempt.ts';
import { nextProfile } from './profiles.ts';
import { buildView, type View, viewOf } from './view.ts';

export interface QuotaPreview {
  /** Replicas protected now that the new quota leaves borrowed. */
  became_borrowed: string[];
  /** Replicas borrowed now that the new quota protects. */
  became_protected: string[];
  /** Borrowed replicas under the scope once the quota is set: what could be reclaimed from it. */
  reclaimable: { replica: string; model: string; resources: Resources }[];
  /**
   * Models owned in the scope's subtree whose next replica the new limit blocks and the old did not,
   * with the replicas of a lower claim the model would preempt to start it all the same.
   */
  blocked_models: { model: string; why: string; preempts?: string[] }[];
  /**
   * The scope's priority as set, and its siblings (the scopes and models beneath the same parent, or
   * the other orgs and the models without owner) whose priority is above, equal to or below it: claims
   * beneath the scope outrank those beneath a sibling below it, whatever their tiers (POLICY.md
   * "Priority nests").
   */
  priority: { value: number; above: string[]; equal: string[]; below: string[] };
}

/** The scope's priority against its siblings', once `after` has the new quota. */
function priorityAmong(after: View, quota: Quota): QuotaPreview['priority'] {
  const value = quota.priority ?? 0;
  const parent = after.scopes.get(quota.scope)?.parent ?? null;
  const siblings: [name: string, priority: number][] = [];
  for (const scope of after.scopes.values()) {
    if (scope.parent === parent && scope.key !== quota.scope) {
      siblings.push([scopeLabel(after.scopes, scope.key), after.quotas.get(scope.key)?.priority ?? 0]);
    }
  }
  for (const model of after.models.values()) {
    const owner = after.chain(model.owner).length > 0 ? model.owner : null;
    if (owner === parent) siblings.push([`model ${model.name}`, model.priority ?? 0]);
  }
  const named = (keep: (p: number) => boolean) =>
    siblings
      .filter(([, p]) => keep(p))
      .map(([name, p]) => `${name} (${p})`)
      .sort();
  return {
    value,
    above: named((p) => p > value),
    equal: named((p) => p === value),
    below: named((p) => p < value),
  };
}

/**
 * What setting `quota` (replacing the scope's quota) would change, changing nothing. A model's next
 * replica is one of its first profile in trial order; a blocked model says what it would preempt.
 */
export function previewQuota(input: Snapshot | View, quota: Quota): QuotaPreview {
  const before = viewOf(input);
  const quotas = [...before.snapshot.quotas.filter((q) => q.scope !== quota.scope), quota];
  const after = buildView({ ...before.snapshot, quotas });
  const was = protection(before);
  const is = protection(after);
  const active = after.active;
  const underScope = active.filter((r) => after.chain(after.ownerOf(r)).includes(quota.scope));

  const blocked: QuotaPreview['blocked_models'] = [];
  for (const model of after.models.values()) {
    if (!after.chain(model.owner).includes(quota.scope)) continue;
    const next = nextProfile(model, after.measurementsOf(model.name));
    if (!next || blockingLimit(before, model.owner, next.resources)) continue;
    const block = blockingLimit(after, model.owner, next.resources);
    if (!block) continue;
    const why = limitSentence(after, block, next.resources);
    const serving = modelFigures(after, model).serving.length;
    const plan =
      mayPreempt(after, model.owner) && planPreemption(after, model, next, nextClaim(model, serving));
    if (!plan) blocked.push({ model: model.name, why });
    else {
      const preempts = plan.victims.map(victimPhrase);
      blocked.push({ model: model.name, why: `${why}, but it may preempt ${listing(preempts)}`, preempts });
    }
  }

  return {
    became_borrowed: active.filter((r) => was.get(r.id) !== null && is.get(r.id) === null).map((r) => r.id),
    became_protected: active.filter((r) => was.get(r.id) === null && is.get(r.id) !== null).map((r) => r.id),
    reclaimable: underScope
      .filter((r) => is.get(r.id) === null)
      .map((r) => ({ replica: r.id, model: r.model, resources: r.resources })),
    blocked_models: blocked,
    priority: priorityAmong(after, quota),
  };
}
