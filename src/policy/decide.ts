import type { Replica } from '../domain/cluster.ts';
import type { Decision, DecisionInputs, Pending } from '../domain/decision.ts';
import type { Model } from '../domain/model.ts';
import { scopeLabel } from '../domain/scope-names.ts';
import type { ModelMemory, Snapshot } from '../domain/snapshot.ts';
import { chooseProfile } from './choose-profile.ts';
import { nextClaim } from './claims.ts';
import {
  inFlight,
  pendingSentence,
  preemptedSentence,
  quotaStanding,
  replicas,
  standing,
} from './explain.ts';
import { yieldsTo } from './fairness.ts';
import { holdsOf } from './holdings.ts';
import { overLimitDimensions } from './limits.ts';
import { type LoadReading, loadOf } from './load.ts';
import {
  type BurstHeadroom,
  burstHeadroom,
  burstPhrase,
  hasBursts,
  headroomSentence,
  mayKeepAsSpare,
  mayPlaceSpare,
  observeLoad,
  risingBurst,
  risingSentence,
} from './load-growth.ts';
import { type ModelFigures, modelFigures } from './model-figures.ts';
import { preemptedFor } from './preempt.ts';
import { formatNumber } from './resources.ts';
import { removable, removalOrder } from './scale-down.ts';
import { type UpTrigger, upTrigger } from './scaling.ts';
import { type View, viewOf } from './view.ts';

type Common = Pick<Decision, 'model' | 'rejected' | 'inputs' | 'memory'>;

/**
 * One step of a model's reconciler (POLICY.md "Scaling a model" and "Choosing a profile"): at most
 * one replica placed, reclaimed for or removed. A pass repeats the places (burst.ts); the reconciler
 * loops until the answer is 'none'.
 *
 * 1. Replicas beyond max_replicas are removed at once, in removal order.
 * 2. A replica is added when a trigger asks (min_replicas, load above capacity, target throughput),
 *    within max_replicas, limits, headroom and reclaim.
 * 3. Otherwise one replica is taken back once the scale-down condition has held for the window;
 *    never while a replica is pending or starting, never on unknown load. A scope over its limit
 *    does not force a removal (a limit stops nothing that runs); it decides which replica goes first.
 *
 * `memory.scaleDownSince` comes back in `decision.memory`: set when the condition starts to hold,
 * kept while it holds, null when it breaks and after each removal (every removal waits a window).
 */
export function decideModel(input: Snapshot | View, modelName: string, memory: ModelMemory): Decision {
  const view = viewOf(input);
  const model = view.models.get(modelName);
  if (!model) return unknownModel(modelName);
  const figures = modelFigures(view, model);
  const load = loadOf(view, model.name);
  const growth = observeLoad(memory.growth, view.now, load, view.replicasOfModel(model.name), view.settings);
  const common: Common = {
    model: model.name,
    rejected: [],
    inputs: decisionInputs(view, model, figures, load),
    memory: { scaleDownSince: null, growth },
  };
  const order = removalOrder(view, model, figures);
  const n = figures.serving.length;
  if (n > model.max_replicas) {
    const replica = [...figures.serving].sort(order)[0];
    return remove(common, replica, `scale down: ${replicas(n)} > max_replicas ${model.max_replicas}`);
  }
  const up = upTrigger(model, figures, load);
  if (up) return addReplica(view, model, figures, memory, up, common);
  if (load.inFlight === null) {
    return { ...common, action: 'none', reason: `steady: ${load.why}; ${serving(figures)}` };
  }
  const spare = addSpare(view, model, figures, load.inFlight, memory, common);
  if (spare) return spare;
  return scaleDown(view, model, figures, load.inFlight, memory, order, common);
}

const serving = (figures: ModelFigures) =>
  `${formatNumber(figures.capacity)} at SLO on ${replicas(figures.serving.length)}`;

/**
 * A spare replica while a burst outruns the ready replicas (load-growth.ts risingBurst), or null. It has
 * the lowest claim (surplus), and is placed only in free room within the limits: never by reclaim or
 * preemption, and it yields to any model waiting with a higher claim. With no such room, nothing.
 */
function addSpare(
  view: View,
  model: Model,
  figures: ModelFigures,
  load: number,
  memory: ModelMemory,
  common: Common,
): Decision | null {
  if (figures.serving.length >= model.max_replicas || overLimitDimensions(view, model.owner).size > 0) {
    return null;
  }
  const ready = figures.serving
    .filter((r) => r.state === 'ready')
    .reduce((total, r) => total + figures.concurrency(r), 0);
  const burst = risingBurst(common.memory.growth!, view.now, load, figures.capacity, ready);
  if (!burst) return null;
  const claim = { ...nextClaim(model, figures.serving.length), tier: 'surplus' as const };
  const choice = chooseProfile(view, model, figures.profiles, memory, false, claim, (profile) =>
    yieldsTo(view, model, profile, claim),
  );
  if (choice.action !== 'place') return null;
  const { profile } = choice;
  if (!mayPlaceSpare(view, model.name, model.owner, profile.resources)) return null;
  return {
    ...common,
    inputs: { ...common.inputs, burst },
    rejected: choice.rejected,
    profile: profile.name,
    resources: profile.resources,
    action: 'place',
    node: choice.node,
    reason: `${risingSentence(load, burst)}; placed ${profile.name} on ${choice.node} (spare)`,
  };
}

/** Up: one replica of the first profile that fits, by placement or reclaim; else pending, and why. */
function addReplica(
  view: View,
  model: Model,
  figures: ModelFigures,
  memory: ModelMemory,
  up: UpTrigger,
  common: Common,
): Decision {
  if (figures.serving.length >= model.max_replicas) {
    return pendingOn(common, up, [{ code: 'max_replicas', max_replicas: model.max_replicas }]);
  }
  const claim = nextClaim(model, figures.serving.length);
  const choice = chooseProfile(view, model, figures.profiles, memory, up.measuredOnly, claim, (profile) =>
    yieldsTo(view, model, profile, claim),
  );
  const { rejected } = choice;
  if (choice.action === 'none') return pendingOn({ ...common, rejected }, up, choice.pending);
  const { profile } = choice;
  const placed = { ...common, rejected, profile: profile.name, resources: profile.resources };
  if (choice.action === 'place') {
    const where = quotaStanding(view, model.owner, profile.resources);
    const reason = `${up.why}; placed ${profile.name} on ${choice.node}${where ? ` (${where})` : ''}`;
    return { ...placed, action: 'place', node: choice.node, reason };
  }
  if (choice.action === 'preempt') {
    const { plan } = choice;
    return {
      ...placed,
      action: 'preempt',
      node: plan.node,
      ...(plan.limit && { preempt_limit: plan.limit }),
      victims: plan.victims,
      claim: plan.claim,
      reason: `${up.why}; ${preemptedSentence(view, model, profile.name, plan)}`,
    };
  }
  const { plan } = choice;
  const taken =
    plan.victims.length > 0
      ? `reclaimed ${replicas(plan.victims.length, 'borrowed ')} on ${plan.node}`
      : `reserved the room draining replicas free on ${plan.node}`;
  const reason =
    `${up.why}; ${taken} for ${scopeLabel(view.scopes, plan.for)} ` +
    `(within ${standing(view, plan.for, 'guarantee')}) to place ${profile.name}`;
  return {
    ...placed,
    action: 'reclaim',
    node: plan.node,
    victims: plan.victims,
    reclaim_for: plan.for,
    reason,
  };
}

/**
 * Down: one replica once the scale-down condition has held for the window; the window is kept in memory.
 * The rest must also keep the headroom for the model's bursts (load-growth.ts), and the 70% rule is
 * judged on the highest load seen during the window, so that a bursty model may shed several replicas
 * in one pass (burst.ts) without shedding what the window's own peak needed.
 */
function scaleDown(
  view: View,
  model: Model,
  figures: ModelFigures,
  load: number,
  memory: ModelMemory,
  order: (a: Replica, b: Replica) => number,
  common: Common,
): Decision {
  const steady = `steady: ${inFlight(load)} <= ${serving(figures)}`;
  const preempted = preemptedFor(view, model);
  if (preempted.length > 0 && figures.settling.length > 0) {
    const pending: Pending[] = [
      { code: 'preempted', profile: figures.settling[0].profile, replicas: preempted.length },
    ];
    return { ...common, action: 'none', pending, reason: `${steady}; pending: ${pendingSentence(pending)}` };
  }
  if (figures.settling.length > 0) {
    const settling = `${replicas(figures.settling.length)} pending or starting`;
    return { ...common, action: 'none', reason: `${steady}; no scale-down while ${settling}` };
  }
  const growth = common.memory.growth;
  // A scope over its limit keeps no headroom: spare room is bounded by limits as every replica is.
  const overLimit = overLimitDimensions(view, model.owner).size > 0;
  const headroom = overLimit ? null : burstHeadroom(growth, view.now, load, view.settings);
  const keep = headroom?.spare ?? 0;
  const shown: Common = headroom ? { ...common, inputs: { ...common.inputs, burst: headroom } } : common;
  // A steady model is judged on its load now, as it always was; a bursty one on the window's peak.
  const bursty = hasBursts(growth);
  const peak = bursty && memory.scaleDownSince !== null ? Math.max(load, memory.scaleDownPeak ?? load) : load;
  const keeping = removable(model, figures, peak, order, load + keep);
  const plain = headroom ? removable(model, figures, peak, order, load) : keeping;
  // Room owed to another scope, or that another model waits for, is not kept as spare.
  const unkept = !keeping && plain !== null && !mayKeepAsSpare(view, model.owner, plain.replica);
  const candidate = unkept ? plain : keeping;
  if (!candidate) {
    const kept = headroom && plain ? `; ${keptSentence(model, figures, load, headroom)}` : '';
    return { ...shown, action: 'none', reason: `${steady}${kept}` };
  }

  const since = memory.scaleDownSince ?? view.now;
  const condition =
    `${inFlight(peak)}${peak > load ? ' at most' : ''} <= 70% of ${formatNumber(candidate.rest)} at SLO ` +
    `without replica ${candidate.replica.id} for ${Math.round((view.now - since) / 1000)} s`;
  const spare = !headroom
    ? ''
    : unkept
      ? `, no spare kept on room another scope is owed or another model waits for`
      : `, keeping room for ${keep} more: ${burstPhrase(model.name, headroom)}`;
  const window = view.settings.scaleDownWindowMs;
  if (view.now - since >= window) {
    return remove(shown, candidate.replica, `scale down: ${condition}${spare}`);
  }
  return {
    ...shown,
    memory: { ...shown.memory, scaleDownSince: since, ...(bursty && { scaleDownPeak: peak }) },
    action: 'none',
    reason: `steady: ${condition} of the ${Math.round(window / 1000)} s window${spare}`,
  };
}

/** "kept 3 spare: code grew by 40 in flight within 60 s 12 min ago", counting the replicas the load does not need. */
function keptSentence(model: Model, figures: ModelFigures, load: number, headroom: BurstHeadroom) {
  let needed = 0;
  let covered = 0;
  for (const replica of figures.serving) {
    if (covered >= load) break;
    covered += figures.concurrency(replica);
    needed++;
  }
  return headroomSentence(model.name, headroom, figures.serving.length - needed);
}

/** Nothing done: the model waits for what `pending` names, and its sentence says so. */
const pendingOn = (common: Common, up: UpTrigger, pending: Pending[]): Decision => ({
  ...common,
  action: 'none',
  pending,
  reason: `${up.why}; pending: ${pendingSentence(pending)}`,
});

/**
 * The decision as recorded when its reservation was refused (the state changed since it was planned):
 * nothing was done, and the reconciler plans again.
 */
export const refusedDecision = (decision: Decision, why: string): Decision => ({
  ...decision,
  action: 'none',
  reason: `${decision.reason}; not done: ${why}, planning again`,
});

function remove(common: Common, replica: Replica, why: string): Decision {
  return {
    ...common,
    action: 'remove',
    replica: replica.id,
    profile: replica.profile,
    node: replica.node,
    reason: `${why}; removing ${replica.id}`,
  };
}

function decisionInputs(view: View, model: Model, figures: ModelFigures, load: LoadReading): DecisionInputs {
  const quotas = view
    .chain(model.owner)
    .filter((key) => view.quotas.has(key))
    .map((key) => {
      const { guarantee, limit } = view.quotas.get(key)!;
      return { scope: key, name: view.displayName(key), guarantee, limit, holds: holdsOf(view, key) };
    });
  return {
    in_flight: load.inFlight,
    capacity_at_slo: figures.capacity,
    replicas: figures.serving.length,
    min_replicas: model.min_replicas,
    max_replicas: model.max_replicas,
    target_tokens_per_sec: model.target_tokens_per_sec,
    tokens_per_sec: figures.tokensPerSec,
    quotas,
  };
}

function unknownModel(name: string): Decision {
  return {
    model: name,
    action: 'none',
    reason: `there is no model "${name}"`,
    rejected: [],
    inputs: {
      in_flight: null,
      capacity_at_slo: 0,
      replicas: 0,
      min_replicas: 0,
      max_replicas: 0,
      tokens_per_sec: 0,
      quotas: [],
    },
    memory: { scaleDownSince: null },
  };
}
