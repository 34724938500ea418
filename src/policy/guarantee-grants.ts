import type { Quota } from '../domain/quota.ts';
import { DIMENSIONS, type Dimension } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { formatAmount } from './resources.ts';
import type { View } from './view.ts';

/** What a scope's parent grants on one dimension once `quota` is set (POLICY.md "Guarantees nest"). */
export interface GrantBudget {
  parent: ScopeKey;
  dimension: Dimension;
  /** The parent's own guarantee on the dimension; 0 when it sets none (it has none to grant). */
  guaranteed: number;
  /** The guarantees of the parent's children on the dimension, `quota` in place of its scope's. */
  granted: number;
  /** What the parent has left to grant to the quota's scope: guaranteed minus its other children's. */
  left: number;
  /** The quota's guarantee on the dimension. */
  asked: number;
}

/** Per dimension the new guarantee sets, its parent's budget; none for an org (nothing above it). */
function budgets(view: View, quota: Quota): GrantBudget[] {
  const parent = view.scopes.get(quota.scope)?.parent;
  if (!parent) return [];
  const siblings = [...view.scopes.values()].filter((s) => s.parent === parent && s.key !== quota.scope);
  const own = view.quotas.get(parent)?.guarantee ?? {};
  return DIMENSIONS.filter((d) => quota.guarantee?.[d] !== undefined).map((dimension) => {
    const others = siblings.reduce(
      (total, s) => total + (view.quotas.get(s.key)?.guarantee?.[dimension] ?? 0),
      0,
    );
    const guaranteed = own[dimension] ?? 0;
    const asked = quota.guarantee![dimension]!;
    return { parent, dimension, guaranteed, granted: others + asked, left: guaranteed - others, asked };
  });
}

/**
 * The budget a raise in `quota` overruns, or null: a guarantee is granted only out of what the scope
 * above is guaranteed, so the children's guarantees, summed per dimension, stay within the parent's
 * (nothing where the parent sets none). Only a raise is checked: lowering is always allowed.
 * Only an admin may overrun one (api/auth/permissions.ts), and is warned (grantWarnings).
 */
export function overrunBudget(view: View, quota: Quota): GrantBudget | null {
  const before = view.quotas.get(quota.scope)?.guarantee ?? {};
  return (
    budgets(view, quota).find((b) => b.asked > (before[b.dimension] ?? 0) && b.granted > b.guaranteed) ?? null
  );
}

/** "may not guarantee project:Acme/ml/grab 1000 GPUs: team:Acme/ml has 8 GPUs left to grant of its 8". */
export function overrunSentence(quota: Quota, b: GrantBudget, label: (key: ScopeKey) => string): string {
  const amount = (n: number) => formatAmount(b.dimension, n);
  const left =
    b.guaranteed > 0
      ? `${label(b.parent)} has ${amount(Math.max(0, b.left))} left to grant of its guarantee of ${amount(b.guaranteed)}`
      : `${label(b.parent)} has no guarantee of ${b.dimension} to grant`;
  return `may not guarantee ${label(quota.scope)} ${amount(b.asked)}: ${left}`;
}

/**
 * Sentences for a guarantee that is accepted but cannot be honoured as written: it is larger than
 * the guarantee of an ancestor, which caps what it protects, or its parent's children together are
 * guaranteed more than the parent is.
 */
export function grantWarnings(view: View, quota: Quota, label: (key: ScopeKey) => string): string[] {
  const warnings: string[] = [];
  const ancestors = view.chain(quota.scope).slice(1);
  for (const d of DIMENSIONS) {
    const asked = quota.guarantee?.[d];
    if (asked === undefined) continue;
    const capping = ancestors.find((key) => view.quotas.get(key)?.guarantee?.[d] !== undefined);
    const cap = capping ? view.quotas.get(capping)!.guarantee![d]! : Number.POSITIVE_INFINITY;
    if (asked > cap) {
      warnings.push(
        `the guarantee of ${formatAmount(d, asked)} is above the ${formatAmount(d, cap)} guaranteed to ${label(capping!)}, which caps what it protects`,
      );
    }
  }
  for (const b of budgets(view, quota)) {
    if (b.guaranteed > 0 && b.granted > b.guaranteed) {
      warnings.push(
        `the guarantees beneath ${label(b.parent)} add up to ${formatAmount(b.dimension, b.granted)}, more than its own guarantee of ${formatAmount(b.dimension, b.guaranteed)}: not all of them can be honoured at once`,
      );
    }
  }
  return warnings;
}
