import type { Claim, Pending } from '../domain/decision.ts';
import type { Model, Profile } from '../domain/model.ts';
import type { Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { scopeLabel } from '../domain/scope-names.ts';
import type { ModelMemory } from '../domain/snapshot.ts';
import { rejectionOf } from './choose-profile.ts';
import { compareClaims, nextClaim } from './claims.ts';
import { blockingLimit } from './limits.ts';
import { loadOf } from './load.ts';
import { modelFigures } from './model-figures.ts';
import { pickNode } from './placement.ts';
import { limitRoom } from './preempt.ts';
import { fitsWithin, onDimensionsOf, subtract, usesAnyOf } from './resources.ts';
import { upTrigger } from './scaling.ts';
import { perView, type View } from './view.ts';

/** A model under a limit that asks for a replica it could take: the claim it would have, and its need. */
interface Waiting {
  model: Model;
  claim: Claim;
  need: Resources;
}

/**
 * The one place this file compares claims (positive when a is stronger). The claim order is
 * claims.ts's; should it come to weigh the models as well as their claims, only this call changes.
 */
const claimOrder = (a: Pick<Waiting, 'model' | 'claim'>, b: Pick<Waiting, 'model' | 'claim'>): number =>
  compareClaims(a.claim, b.claim);

/**
 * Whether a new replica of `profile` for `model`, of claim `claim`, leaves the room of a limit to
 * siblings of a higher claim (docs/policy.md "Fair shares from the first placement"), and to whom:
 * a `yields` pending, or null when it may take the room.
 *
 * For each scope on the owner's chain whose limit the replica draws on, the models under it that ask for
 * a replica of a strictly higher claim take the limit's room first, strongest first, each as far as its
 * replica fits what is left. The replica yields when it no longer fits what they leave. So models that
 * arrive together place in claim order from the first placement: every model's 1st replica before any
 * model's 2nd, and nobody needs to preempt a sibling afterwards. The strongest waiting claim never
 * yields, so some model always places: yielding never stalls the limit.
 */
export function yieldsTo(view: View, model: Model, profile: Profile, claim: Claim): Pending | null {
  const need = profile.resources;
  const mine = { model, claim };
  for (const scope of view.chain(model.owner)) {
    const limit = view.quotas.get(scope)?.limit;
    if (!limit || !usesAnyOf(need, limit)) continue;
    let left = limitRoom(view, model, scope);
    let first: Waiting | undefined;
    for (const other of waitingUnder(view, scope)) {
      if (other.model.name === model.name || claimOrder(other, mine) <= 0) continue;
      const theirs = onDimensionsOf(other.need, limit);
      if (!fitsWithin(theirs, left)) continue;
      left = subtract(left, theirs);
      first ??= other;
    }
    if (first && !fitsWithin(onDimensionsOf(need, limit), left)) {
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

/** The models under each scope asked for that wait for a replica they could take, strongest claim first. */
const waitingByScope = perView(() => new Map<ScopeKey, Waiting[]>());

function waitingUnder(view: View, scope: ScopeKey): readonly Waiting[] {
  const known = waitingByScope(view);
  let waiting = known.get(scope);
  if (!waiting) {
    waiting = [];
    for (const model of view.models.values()) {
      if (!view.chain(model.owner).includes(scope)) continue;
      const asks = waitingFor(view, model, scope);
      if (asks) waiting.push(asks);
    }
    waiting.sort((a, b) => claimOrder(b, a));
    known.set(scope, waiting);
  }
  return waiting;
}

/**
 * The replica the model asks for next, if room under the limit of `scope` would let it take one: it asks
 * (min_replicas, load, target) within max_replicas, and its first profile in trial order that it may use
 * (not backed off after failed starts, as the store last read them, nor unable to meet its SLO) finds a
 * node with room and no nearer limit on the chain stops it. A model that could not take the room is not
 * waited for.
 */
function waitingFor(view: View, model: Model, scope: ScopeKey): Waiting | null {
  if (model.deleting) return null;
  const figures = modelFigures(view, model);
  const serving = figures.serving.length;
  if (serving >= model.max_replicas) return null;
  const up = upTrigger(model, figures, loadOf(view, model.name));
  if (!up) return null;
  const memory: ModelMemory = {
    scaleDownSince: null,
    backedOffUntil: view.snapshot.backedOff?.[model.name] ?? {},
  };
  const measurements = view.measurementsOf(model.name);
  const profile = figures.profiles.find(
    (p) => !rejectionOf(view, p, memory, measurements.get(p.name), up.measuredOnly),
  );
  if (!profile || !pickNode(view, profile)) return null;
  const block = blockingLimit(view, model.owner, profile.resources);
  const chain = view.chain(model.owner);
  if (block && chain.indexOf(block.scope) < chain.indexOf(scope)) return null;
  return { model, claim: nextClaim(model, serving), need: profile.resources };
}
