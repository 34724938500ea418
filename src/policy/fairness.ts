import type { Claim, Pending } from '../domain/decision.ts';
import type { Model, Profile } from '../domain/model.ts';
import type { Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { scopeLabel } from '../domain/scope-names.ts';
import type { ModelMemory } from '../domain/snapshot.ts';
import { backedOffOf } from './backoff.ts';
import { rejectionOf } from './choose-profile.ts';
import { compareInOrder, type Ranked, ranked } from './claim-order.ts';
import { nextClaim } from './claims.ts';
import { holdsOf } from './holdings.ts';
import { loadOf } from './load.ts';
import { type ModelFigures, modelFigures } from './model-figures.ts';
import { pickNode } from './placement.ts';
import { limitRoom } from './preempt.ts';
import { concurrencyOf } from './profiles.ts';
import { add, dimensionsOf, fitsWithin, onDimensionsOf, subtract, usesAnyOf } from './resources.ts';
import { upTrigger } from './scaling.ts';
import { perView, type View } from './view.ts';

/** A model under a limit that asks for a replica it could take: the claim it would have, and its need. */
interface Waiting {
  model: Model;
  claim: Claim;
  /** The claim with its model's chain, as claims compare (claim-order.ts), figured once. */
  ranked: Ranked;
  need: Resources;
}

/**
 * How this file compares claims (positive when a is stronger): claim-order.ts's total order, which
 * agrees with compareClaims wherever that finds one stronger. Who is waited for follows the total
 * order, not compareClaims itself: across scopes the nests leave a claim tied with two others of
 * which one outranks the other, so a replica that waited for none of its ties could take the room the
 * stronger of them then preempted the weaker for (the property tests found it).
 */
type Claimed = Pick<Waiting, 'ranked'>;
const claimOrder = (a: Claimed, b: Claimed): number => compareInOrder(a.ranked, b.ranked);

/**
 * Whether a new replica of `profile` for `model`, of claim `claim`, leaves the room of a limit to
 * siblings of a higher claim (docs/policy.md "Fair shares from the first placement"), and to whom:
 * a `yields` pending, or null when it may take the room.
 *
 * For each scope on the owner's chain whose limit the replica draws on, the replicas that models under
 * it wait for (waitingUnder) with a strictly higher claim, each that the limit's room could hold by
 * itself, come first: the replica yields when the room left after it would not hold them all. Room is
 * left idle only while they are on their way, never to a replica that could not take it; and since
 * every one of them fits beside it, none of them would need to preempt it afterwards. So models that
 * arrive together place in claim order from the first placement: every model's 1st replica before any
 * model's 2nd. The strongest waiting claim never yields, so some model always places.
 */
export function yieldsTo(view: View, model: Model, profile: Profile, claim: Claim): Pending | null {
  const mine = { ranked: ranked(view, model, claim) };
  for (const scope of view.chain(model.owner)) {
    const limit = view.quotas.get(scope)?.limit;
    if (!limit || !usesAnyOf(profile.resources, limit)) continue;
    const room = limitRoom(view, model, scope);
    let wanted: Resources = onDimensionsOf(profile.resources, limit);
    let first: Waiting | undefined;
    for (const other of waitingUnder(view, scope)) {
      if (other.model.name === model.name || claimOrder(other, mine) <= 0) continue;
      const theirs = onDimensionsOf(other.need, limit);
      if (!fitsWithin(theirs, room)) continue;
      wanted = add(wanted, theirs);
      first ??= other;
    }
    if (first && !fitsWithin(wanted, room)) {
      return {
        code: 'yields',
        profile: profile.name,
        to: first.model.name,
        scope,
        scope_label: scopeLabel(view.scopes, scope),
      };
    }
  }
  return null;
}

/** The models under each scope: those it and the scopes beneath it own. */
const modelsUnder = perView((view) => {
  const under = new Map<ScopeKey, Model[]>();
  for (const model of view.models.values()) {
    for (const scope of view.chain(model.owner)) {
      const list = under.get(scope);
      if (list) list.push(model);
      else under.set(scope, [model]);
    }
  }
  return under;
});

/**
 * The replicas the models under each scope asked for wait for and could take, strongest claim first,
 * found when first asked for: a pass asks for the few limits its places draw on.
 */
const waitingByScope = perView(() => new Map<ScopeKey, Waiting[]>());

function waitingUnder(view: View, scope: ScopeKey): readonly Waiting[] {
  const known = waitingByScope(view);
  let waiting = known.get(scope);
  if (!waiting) {
    waiting = [];
    const limit = view.quotas.get(scope)?.limit ?? {};
    for (const model of modelsUnder(view).get(scope) ?? []) {
      const asks = asksOf(view, model);
      if (asks.length > 0 && usesAnyOf(asks[0].need, limit)) waiting.push(...asks);
    }
    waiting.sort((a, b) => claimOrder(b, a));
    known.set(scope, waiting);
  }
  return waiting;
}

/** Each model's asks (waitingOf), figured once per view: a model is under several limited scopes. */
const figuredAsks = perView(() => new Map<string, Waiting[]>());

function asksOf(view: View, model: Model): Waiting[] {
  const known = figuredAsks(view);
  let asks = known.get(model.name);
  if (!asks) {
    asks = waitingOf(view, model);
    known.set(model.name, asks);
  }
  return asks;
}

/**
 * The replicas the model asks for next, if room under a limit would let it take them: it asks
 * (min_replicas, load, target) within max_replicas, and its first profile in trial order that it may use
 * (not backed off after failed starts, as the store last read them, nor unable to meet its SLO) finds a
 * node with room. A model that could not take the room is not waited for. Each replica has the claim it
 * would have; no more are counted than the room of every limit on its owner's chain could hold, so none
 * that a nearer limit stops.
 */
function waitingOf(view: View, model: Model): Waiting[] {
  if (model.deleting) return [];
  const figures = modelFigures(view, model);
  const serving = figures.serving.length;
  if (serving >= model.max_replicas) return [];
  const load = loadOf(view, model.name);
  const up = upTrigger(model, figures, load);
  if (!up) return [];
  const backedOffUntil = backedOffOf(view.snapshot, model.name);
  const memory: ModelMemory = { scaleDownSince: null, backedOffUntil };
  const measurements = view.measurementsOf(model.name);
  const profile = figures.profiles.find(
    (p) => !rejectionOf(view, p, memory, measurements.get(p.name), up.measuredOnly),
  );
  if (!profile || !pickNode(view, profile)) return [];
  const need = profile.resources;
  let most = Number.POSITIVE_INFINITY;
  for (const key of view.chain(model.owner)) {
    const bound = view.quotas.get(key)?.limit;
    if (bound)
      most = Math.min(most, fitting(need, onDimensionsOf(subtract(bound, holdsOf(view, key)), bound)));
  }
  // Under no limit it draws on, nobody waits for its room.
  if (!Number.isFinite(most)) return [];
  const measurement = measurements.get(profile.name);
  const asked = Math.min(
    model.max_replicas - serving,
    askedFor(model, figures, load.inFlight, {
      concurrency: concurrencyOf(profile, measurement, view.settings),
      throughput: measurement?.throughput_tok_per_sec ?? 0,
    }),
    most,
  );
  return Array.from({ length: asked }, (_, i) => {
    const claim = nextClaim(model, serving + i);
    return { model, claim, ranked: ranked(view, model, claim), need };
  });
}

/**
 * How many replicas of a profile serving `each` the model asks for beyond those it serves: up to
 * min_replicas, then as many as cover the load and the target throughput (scaling.ts asks one at a time
 * for the same reasons). At least one: only a model that asks is asked.
 */
function askedFor(
  model: Model,
  figures: ModelFigures,
  inFlight: number | null,
  each: { concurrency: number; throughput: number },
): number {
  const floor = Math.max(0, model.min_replicas - figures.serving.length);
  const short = (wanted: number, has: number, per: number) =>
    wanted > has && per > 0 ? Math.ceil((wanted - has) / per) : 0;
  const forLoad = inFlight === null ? 0 : short(inFlight, figures.capacity, each.concurrency);
  const target = model.target_tokens_per_sec;
  const forTarget = target === undefined ? 0 : short(target, figures.tokensPerSec, each.throughput);
  return Math.max(1, floor, forLoad, forTarget);
}

/** How many replicas of `need` fit within `room` (none when it is short), on the dimensions room sets; infinite when need uses none. */
function fitting(need: Resources, room: Resources): number {
  let most = Number.POSITIVE_INFINITY;
  for (const d of dimensionsOf(room)) {
    const each = need[d] ?? 0;
    if (each > 0) most = Math.min(most, Math.max(0, Math.floor((room[d] ?? 0) / each)));
  }
  return most;
}
