import type { Quota } from '../domain/quota.ts';
import { DIMENSIONS, type Dimension } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { formatAmount } from './resources.ts';
import type { View } from './view.ts';

/** What a parent's children are guaranteed together on one dimension, against its own guarantee. */
interface Granted {
  parent: ScopeKey;
  dimension: Dimension;
  /** The parent's own guarantee on the dimension; 0 when it sets none (it has none to grant). */
  guaranteed: number;
  /** The guarantees of the parent's children on the dimension, `quota` in place of its scope's. */
  granted: number;
}

/** What a scope's parent grants on one dimension once `quota` is set (POLICY.md "Guarantees nest"). */
export interface GrantBudget extends Granted {
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

/** Per dimension the quota's guarantee sets, what the children of its scope are guaranteed together. */
function grantedBeneath(view: View, quota: Quota): Granted[] {
  const children = [...view.scopes.values()].filter((s) => s.parent === quota.scope);
  return DIMENSIONS.filter((d) => quota.guarantee?.[d] !== undefined).map((dimension) => ({
    parent: quota.scope,
    dimension,
    guaranteed: quota.guarantee![dimension]!,
    granted: children.reduce((total, s) => total + (view.quotas.get(s.key)?.guarantee?.[dimension] ?? 0), 0),
  }));
}

/**
 * The budget a raise in `quota` overruns, or null: a guarantee is granted only out of what the scope
 * above is guaranteed, so the children's guarantees, summed per dimension, stay within the parent's
 * (nothing where the parent sets none). Only a raise is checked: lowering is always allowed.
 * Only an admin may overrun one (contracts/permissions.ts), and is warned (grantWarnings).
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
 * Sentences for a quota that is accepted but that, with the quotas above and beneath its scope, cannot
 * be honoured as written (POLICY.md "Guarantees nest"). Each names a scope's guarantee that is
 * - above the guarantee of its nearest guaranteed ancestor, which caps what it protects;
 * - above the limit of an ancestor, which its scope can never pass;
 * or children whose guarantees add up to more than their parent's. The quota's scope is the guaranteed
 * one or the one above it: lowering a parent below its children is told as much as raising a child.
 */
export function grantWarnings(view: View, quota: Quota, label: (key: ScopeKey) => string): string[] {
  const quotaOf = (key: ScopeKey) => (key === quota.scope ? quota : view.quotas.get(key));
  const beneath = [...view.scopes.keys()].filter(
    (key) => key !== quota.scope && view.chain(key).includes(quota.scope),
  );
  // Each pair is a scope and one of its ancestors, the quota's scope being one of the two.
  const pairs = [
    ...view
      .chain(quota.scope)
      .slice(1)
      .map((above) => [quota.scope, above] as const),
    ...beneath.map((below) => [below, quota.scope] as const),
  ];
  const warnings: string[] = [];
  for (const d of DIMENSIONS) {
    const amount = (n: number) => formatAmount(d, n);
    for (const [below, above] of pairs) {
      const asked = quotaOf(below)?.guarantee?.[d];
      if (asked === undefined) continue;
      const guarantee = `the guarantee of ${amount(asked)}${below === quota.scope ? '' : ` on ${label(below)}`}`;
      const capping = view
        .chain(below)
        .slice(1)
        .find((key) => quotaOf(key)?.guarantee?.[d] !== undefined);
      const cap = capping === above ? quotaOf(above)!.guarantee![d]! : Number.POSITIVE_INFINITY;
      if (asked > cap) {
        warnings.push(
          `${guarantee} is above the ${amount(cap)} guaranteed to ${label(above)}, which caps what it protects`,
        );
      }
      const limit = quotaOf(above)?.limit?.[d];
      if (limit !== undefined && asked > limit) {
        warnings.push(
          `${guarantee} is above the limit of ${amount(limit)} on ${label(above)}, so it can never be used in full`,
        );
      }
    }
  }
  for (const b of [...budgets(view, quota), ...grantedBeneath(view, quota)]) {
    if (b.guaranteed > 0 && b.granted > b.guaranteed) {
      warnings.push(
        `the guarantees beneath ${label(b.parent)} add up to ${formatAmount(b.dimension, b.granted)}, more than its own guarantee of ${formatAmount(b.dimension, b.guaranteed)}: not all of them can be honoured at once`,
      );
    }
  }
  return warnings;
}
