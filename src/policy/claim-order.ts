import type { Replica } from '../domain/cluster.ts';
import { type Claim, TIERS } from '../domain/decision.ts';
import type { Model } from '../domain/model.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { claimOf } from './claims.ts';
import { perView, type View } from './view.ts';

// How claims compare (POLICY.md "Priority nests", as docs/policy.md reads it). A model's chain is a
// list of steps from the root down: its org, team and project, then the model itself. Each step has a
// strength among its siblings (the children of the same scope, or of the root): a scope the priority
// on its quota, a model its own priority. Two claims compare where their chains part, by the two
// steps' strengths, then by each claim's *standing* there: its tier and rank, except that a claim
// beneath a step that has a stronger sibling further down its chain stands as surplus. Without that
// exception three models can preempt each other in a ring (a team's high-priority surplus over its
// low-priority floor, that floor over another team's demand, that demand over the surplus: the
// property tests found it): a number written inside a scope may lower what its claims count for
// outside the scope, never raise it above their tier and rank.

/** A tier and rank as one number, higher stronger: surplus 0, demand 1e7, floor 2e7 - k. */
const TIER_ORDER: Record<Claim['tier'], number> = Object.fromEntries(
  TIERS.map((tier, i) => [tier, i * 1e7]),
) as Record<Claim['tier'], number>;

const standingOfClaim = (claim: Claim): number =>
  TIER_ORDER[claim.tier] - (claim.tier === 'floor' ? claim.k : 0);

/** The standing of a claim capped below a weaker step: that of a surplus replica. */
const CAPPED = TIER_ORDER.surplus;

/** A model's chain from the root's child down to the model itself. */
export interface Chain {
  /** The steps' keys: scope keys, then `model:NAME`. */
  readonly keys: readonly string[];
  /** The strength of each step among its siblings. */
  readonly strengths: readonly number[];
  /** For each step, whether a step beneath it on the chain has a stronger sibling (then the claim stands as surplus there). */
  readonly capped: readonly boolean[];
}

/** A claim with the chain of its model: what claims are compared by. */
export interface Ranked extends Chain {
  readonly claim: Claim;
  /** Its tier and rank as one number. */
  readonly standing: number;
  /** Each step's strength, then the standing there, from the root down: what compareInOrder compares. */
  readonly sortKey: readonly number[];
}

const ROOT = 'root';

/** The strongest strength among the children of each scope (and of the root). */
const strongestChild = perView((view) => {
  const strongest = new Map<string, number>();
  const see = (parent: string, strength: number) =>
    strongest.set(parent, Math.max(strength, strongest.get(parent) ?? Number.NEGATIVE_INFINITY));
  for (const scope of view.scopes.values())
    see(scope.parent ?? ROOT, view.quotas.get(scope.key)?.priority ?? 0);
  for (const model of view.models.values()) see(parentOf(view, model), model.priority ?? 0);
  return strongest;
});

/** A model hangs beneath its owner, or beneath the root when it has none (or its owner names no scope). */
const parentOf = (view: View, model: Model): string =>
  view.chain(model.owner).length > 0 ? (model.owner as ScopeKey) : ROOT;

/** Each model's chain, figured once per view. */
const chains = perView(() => new Map<string, Chain>());

export function chainOf(view: View, model: Model): Chain {
  const known = chains(view);
  let chain = known.get(model.name);
  if (chain) return chain;
  const scopes = [...view.chain(model.owner)].reverse();
  const keys = [...scopes, `model:${model.name}`];
  const strengths = [...scopes.map((key) => view.quotas.get(key)?.priority ?? 0), model.priority ?? 0];
  const parents = [ROOT, ...scopes];
  const strongest = strongestChild(view);
  const capped = new Array<boolean>(keys.length).fill(false);
  for (let i = keys.length - 2; i >= 0; i--) {
    capped[i] = capped[i + 1] || strengths[i + 1] < strongest.get(parents[i + 1])!;
  }
  chain = { keys, strengths, capped };
  known.set(model.name, chain);
  return chain;
}

/** The claim of a model's replica (or of the replica it adds next) with its chain. */
export function ranked(view: View, model: Model, claim: Claim): Ranked {
  const { keys, strengths, capped } = chainOf(view, model);
  const standing = standingOfClaim(claim);
  const sortKey = new Array<number>(2 * keys.length);
  for (let i = 0; i < keys.length; i++) {
    sortKey[2 * i] = strengths[i];
    sortKey[2 * i + 1] = capped[i] ? CAPPED : standing;
  }
  return { keys, strengths, capped, claim, standing, sortKey };
}

const rankedById = perView(() => new Map<string, Ranked | undefined>());

/** The serving replica's claim with its chain; undefined where claimOf has none. */
export function rankedOf(view: View, replica: Replica): Ranked | undefined {
  const known = rankedById(view);
  if (known.has(replica.id)) return known.get(replica.id);
  const claim = claimOf(view, replica);
  const model = view.models.get(replica.model);
  const found = claim && model ? ranked(view, model, claim) : undefined;
  known.set(replica.id, found);
  return found;
}

/** The first step where two chains part (the children of the deepest scope on both); -1 for one model. */
function parting(a: Chain, b: Chain): number {
  const n = Math.min(a.keys.length, b.keys.length);
  for (let i = 0; i < n; i++) if (a.keys[i] !== b.keys[i]) return i;
  return -1;
}

/**
 * The strengths of the steps where two chains part: the priorities of two sibling scopes, of two models
 * of one owner, or of a model and a sibling scope (0 for one model). A model's priority never counts
 * against a model of another owner.
 */
export function compareAtParting(a: Chain, b: Chain): number {
  const i = parting(a, b);
  return i < 0 ? 0 : a.strengths[i] - b.strengths[i];
}

const standingAt = (r: Ranked, i: number): number => (r.capped[i] ? CAPPED : r.standing);

/**
 * Claims compared, stronger first (positive when a is stronger), as Kueue lists its criteria:
 * 1. the strengths of the steps where the two chains part (compareAtParting);
 * 2. the standing of each there: tier (floor, demand, surplus), then rank within the floor tier (the
 *    lower k first); surplus for a claim beneath a step with a stronger sibling below the parting.
 * Two replicas of one model compare by tier and rank.
 */
export function compareClaims(a: Ranked, b: Ranked): number {
  const i = parting(a, b);
  if (i < 0) return a.standing - b.standing;
  return a.strengths[i] - b.strengths[i] || standingAt(a, i) - standingAt(b, i);
}

/**
 * A total order for sorting claims (victim order, the strongest victim of a plan) that agrees with
 * compareClaims wherever it finds one claim stronger: step by step from the root, the strength and the
 * standing there; the shorter chain first where one ends.
 */
export function compareInOrder(a: Ranked, b: Ranked): number {
  const x = a.sortKey;
  const y = b.sortKey;
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length || a.standing - b.standing;
}
