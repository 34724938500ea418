import type { Claim, Pending, Victim } from '../domain/decision.ts';
import type { Model } from '../domain/model.ts';
import type { Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { scopeLabel } from '../domain/scope-names.ts';
import { holdsOf } from './holdings.ts';
import type { BlockingLimit } from './limits.ts';
import { reclaimingScope } from './reclaim.ts';
import { formatAmount, formatNumber, formatResources, onDimensionsOf } from './resources.ts';
import type { View } from './view.ts';

// The words of decisions, kept in one place so the sentences read alike everywhere.

/** "limit of team Acme / ml: holds 14 GPUs + 4 > 16". */
export function limitSentence(view: View, block: BlockingLimit, r: Resources): string {
  const d = block.dimension;
  return (
    `limit of ${scopeLabel(view.scopes, block.scope)}: holds ${formatAmount(d, block.holds[d] ?? 0)} ` +
    `+ ${formatNumber(r[d] ?? 0)} > ${formatNumber(block.limit[d]!)}`
  );
}

/** Why a profile measured as unable to meet its SLO is skipped (the rejection of a decision). */
export const cannotMeetSloWhy =
  'not servable: measured as unable to meet its SLO at any concurrency (max_concurrency_at_slo 0); bench it again to use it';

/** One thing a model waits for, in words: "no room for vllm-h100 (needs 4 GPUs)", "max_replicas 3 reached". */
export function pendingPhrase(pending: Pending): string {
  switch (pending.code) {
    case 'no_room':
      return `no room for ${pending.profile} (needs ${formatResources(pending.needs)})`;
    case 'limit':
      return `a limit of ${pending.scope_label} stops ${pending.profile}`;
    case 'backoff':
      return `${pending.profile} is backed off`;
    case 'unmeasured':
      return `${pending.profile} is not measured`;
    case 'slo_unmet':
      return `${pending.profile} cannot meet its SLO`;
    case 'preempted':
      return `${pending.profile} waits for ${replicas(pending.replicas)} preempted for it${pending.scope_label ? ` under ${pending.scope_label}` : ''} to stop`;
    case 'yields':
      return `${pending.profile} waits: ${pending.to} has fewer of its share under ${pending.scope_label}`;
    case 'max_replicas':
      return `max_replicas ${pending.max_replicas} reached`;
    case 'no_profile':
      return 'the model has no profile';
  }
}

/** The pending part of a decision's sentence: "no room for a (needs 4 GPUs) and a limit of org Beta stops b". */
export const pendingSentence = (pending: readonly Pending[]): string =>
  listing([...new Set(pending.map(pendingPhrase))]);

/** "34 in flight", "1 in flight". */
export const inFlight = (n: number): string => `${formatNumber(n)} in flight`;

/** "1 replica", "3 replicas", "2 borrowed replicas". */
export const replicas = (n: number, kind = ''): string => `${n} ${kind}replica${n === 1 ? '' : 's'}`;

/** "A", "A and B", "A, B and C". */
export function listing(parts: readonly string[]): string {
  if (parts.length <= 1) return parts.join('');
  return `${parts.slice(0, -1).join(', ')} and ${parts.at(-1)}`;
}

/** "guarantee 8 GPUs, holds 6 GPUs": a quota bound of the scope and what it holds on its dimensions. */
export function standing(view: View, key: ScopeKey, bound: 'guarantee' | 'limit'): string {
  const amount = view.quotas.get(key)?.[bound] ?? {};
  const holds = onDimensionsOf(holdsOf(view, key), amount);
  return `${bound} ${formatResources(amount)}, holds ${formatResources(holds)}`;
}

/**
 * Where a new replica of resources r stands in its owner's quotas, for the decision's sentence:
 * "team Acme / ml within guarantee 8 GPUs, holds 6 GPUs", "... beyond guarantee ...", or
 * "... under limit 16 GPUs, holds 6 GPUs"; null when no scope on the chain has a quota.
 */
export function quotaStanding(view: View, owner: ScopeKey | null, r: Resources): string | null {
  const chain = view.chain(owner);
  const within = reclaimingScope(view, owner, r);
  const guaranteed = within ?? chain.find((key) => view.quotas.get(key)?.guarantee);
  if (guaranteed) {
    return `${scopeLabel(view.scopes, guaranteed)} ${within ? 'within' : 'beyond'} ${standing(view, guaranteed, 'guarantee')}`;
  }
  const limited = chain.find((key) => view.quotas.get(key)?.limit);
  return limited ? `${scopeLabel(view.scopes, limited)} under ${standing(view, limited, 'limit')}` : null;
}

/** The action of the note a reclaimed replica leaves in its model's history. */
export const RECLAIMED = 'reclaimed';

/** That note: "reclaimed for team Acme / ml (team:ID): replica r1 on gpu-1 drains so that chat can run". */
export const reclaimedNote = (forScope: string, replica: string, node: string, forModel: string): string =>
  `reclaimed for ${forScope}: replica ${replica} on ${node} drains so that ${forModel} can run`;

/** A claim in words: "priority 0, floor 1 of 2", "priority 3, surplus". */
export const claimPhrase = (claim: Claim): string =>
  `priority ${claim.priority}, ${claim.tier === 'floor' ? `floor ${claim.k} of ${claim.of}` : claim.tier}`;

/** "chat-1a2b (priority 0, surplus)": a victim of a preemption and its claim. */
export const victimPhrase = (victim: Pick<Victim, 'replica' | 'claim'>): string =>
  `${victim.replica}${victim.claim ? ` (${claimPhrase(victim.claim)})` : ''}`;

/** The action of the note a preempted replica leaves in its model's history. */
export const PREEMPTED = 'preempted';

/** That note: "preempted for code (priority 0, floor 1 of 2): replica chat-1a2b (priority 0, surplus) on g0 drains". */
export const preemptedNote = (
  forModel: string,
  claim: Claim | undefined,
  victim: Pick<Victim, 'replica' | 'node' | 'claim'>,
): string =>
  `preempted for ${forModel}${claim ? ` (${claimPhrase(claim)})` : ''}: replica ${victimPhrase(victim)} on ${victim.node} drains`;

/**
 * What a preemption did, for the decision's sentence: "preempted chat-1a2b (priority 0, surplus) for
 * code (priority 0, floor 1 of 2) under the limit of team Big / serve; h100 reserved on g0 starts once
 * it has stopped" (or "on g0" for missing room).
 */
export function preemptedSentence(
  view: View,
  model: Model,
  profile: string,
  plan: { node: string; limit: ScopeKey | null; claim: Claim; victims: readonly Victim[] },
): string {
  const victims = listing(plan.victims.map(victimPhrase));
  const forWhom = `for ${model.name} (${claimPhrase(plan.claim)})`;
  const where = plan.limit ? `under the limit of ${scopeLabel(view.scopes, plan.limit)}` : `on ${plan.node}`;
  const stopped = plan.victims.length === 1 ? 'it has' : 'they have';
  return `preempted ${victims} ${forWhom} ${where}; ${profile} reserved on ${plan.node} starts once ${stopped} stopped`;
}
