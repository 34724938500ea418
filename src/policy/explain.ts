import type { Profile } from '../domain/model.ts';
import type { Resources } from '../domain/resources.ts';
import { parseScopeKey, type ScopeKey } from '../domain/scope.ts';
import { holdsOf } from './holdings.ts';
import type { BlockingLimit } from './limits.ts';
import { reclaimingScope } from './reclaim.ts';
import { formatAmount, formatNumber, formatResources, onDimensionsOf } from './resources.ts';
import type { View } from './view.ts';

// The words of decisions, kept in one place so the sentences read alike everywhere.

/** "team Acme / ml", "org Beta", "project Acme/ml/training". */
export function scopeLabel(view: View, key: ScopeKey): string {
  const kind = view.scopes.get(key)?.kind ?? parseScopeKey(key)?.kind ?? 'scope';
  return `${kind} ${view.displayName(key)}`;
}

/** "limit of team Acme / ml: holds 14 GPUs + 4 > 16". */
export function limitSentence(view: View, block: BlockingLimit, r: Resources): string {
  const d = block.dimension;
  return (
    `limit of ${scopeLabel(view, block.scope)}: holds ${formatAmount(d, block.holds[d] ?? 0)} ` +
    `+ ${formatNumber(r[d] ?? 0)} > ${formatNumber(block.limit[d]!)}`
  );
}

/** "no room for vllm-h100 (needs 4 GPUs)". */
export const noRoomFor = (profile: Profile): string =>
  `no room for ${profile.name} (needs ${formatResources(profile.resources)})`;

/** Why a profile measured as unable to meet its SLO is skipped (the rejection of a decision, a sizing). */
export const cannotMeetSloWhy =
  'not servable: measured as unable to meet its SLO at any concurrency (max_concurrency_at_slo 0); bench it again to use it';

/** "vllm-h100 cannot meet its SLO": that reason as part of a pending sentence. */
export const cannotMeetSloSummary = (profile: Profile): string => `${profile.name} cannot meet its SLO`;

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
    return `${scopeLabel(view, guaranteed)} ${within ? 'within' : 'beyond'} ${standing(view, guaranteed, 'guarantee')}`;
  }
  const limited = chain.find((key) => view.quotas.get(key)?.limit);
  return limited ? `${scopeLabel(view, limited)} under ${standing(view, limited, 'limit')}` : null;
}

/** The action of the note a reclaimed replica leaves in its model's history. */
export const RECLAIMED = 'reclaimed';

/** That note: "reclaimed for team Acme / ml (team:ID): replica r1 on gpu-1 drains so that chat can run". */
export const reclaimedNote = (forScope: string, replica: string, node: string, forModel: string): string =>
  `reclaimed for ${forScope}: replica ${replica} on ${node} drains so that ${forModel} can run`;
