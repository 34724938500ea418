import type { Victim } from '../domain/decision.ts';
import type { Model, Profile } from '../domain/model.ts';
import type { Snapshot } from '../domain/snapshot.ts';
import { placedIn } from './burst.ts';
import { nextClaim } from './claims.ts';
import { limitSentence, pendingPhrase, victimPhrase } from './explain.ts';
import { blockingLimit } from './limits.ts';
import { modelFigures } from './model-figures.ts';
import { pickNode } from './placement.ts';
import { mayPreempt, planPreemption } from './preempt.ts';
import { cannotMeetSlo } from './profiles.ts';
import { formatResources } from './resources.ts';
import { buildView, type View, viewOf } from './view.ts';

export interface SizingPlan {
  /** Replicas to add, per profile, the throughput they add, and the replicas they would preempt. */
  plan: { profile: string; replicas: number; tokens_per_sec: number; preempts?: string[] }[];
  /** What the model's serving replicas measure now plus what the plan adds. */
  reaches_tokens_per_sec: number;
  fits: boolean;
  /**
   * What stops the rest: a scope's limit, no room, a profile unmeasured or unable to meet its SLO,
   * max_replicas.
   */
  blocked_by: string[];
}

/**
 * Where the next replica of the profile would go on the simulated view: a node with room, else the
 * node and victims of a preemption (when the owner's chain allows it), else what stops it.
 */
function nextStep(
  sim: View,
  model: Model,
  profile: Profile,
  count: number,
): { node: string; victims: Victim[] } | string {
  const block = blockingLimit(sim, model.owner, profile.resources);
  const node = block ? null : pickNode(sim, profile);
  if (node) return { node, victims: [] };
  const preemption =
    mayPreempt(sim, model.owner) && planPreemption(sim, model, profile, nextClaim(model, count));
  if (preemption) return preemption;
  return block
    ? `${limitSentence(sim, block, profile.resources)} (profile ${profile.name})`
    : `no room for profile ${profile.name} (needs ${formatResources(profile.resources)})`;
}

/**
 * How to reach T tokens/s (POLICY.md "Sizing for a throughput"), on top of what the model runs: the
 * measured throughput of its serving replicas counts first, and the plan lists the replicas to add,
 * which is what its reconciler will do once T is its target. Profiles are taken in trial order; each
 * adds `ceil(remaining / its throughput)` replicas, placed one at a time on a simulated snapshot so
 * that limits, room and max_replicas stop it where they would. Free room counts, and so do replicas
 * of a lower claim that the model would preempt (the plan names them); reclaim does not, and
 * backed-off profiles are not known here.
 */
export function sizeForThroughput(
  input: Snapshot | View,
  modelName: string,
  tokensPerSec: number,
): SizingPlan {
  const view = viewOf(input);
  const model = view.models.get(modelName);
  if (!model)
    return {
      plan: [],
      reaches_tokens_per_sec: 0,
      fits: false,
      blocked_by: [`there is no model "${modelName}"`],
    };
  const figures = modelFigures(view, model);
  const measurements = view.measurementsOf(model.name);
  const blockedBy = new Set<string>();
  const plan: SizingPlan['plan'] = [];
  let reaches = figures.tokensPerSec;
  let count = figures.serving.length;
  let sim = view;

  for (const profile of figures.profiles) {
    if (reaches >= tokensPerSec || count >= model.max_replicas) break;
    const measurement = measurements.get(profile.name);
    if (cannotMeetSlo(measurement)) {
      blockedBy.add(`profile ${pendingPhrase({ code: 'slo_unmet', profile: profile.name })}`);
      continue;
    }
    const throughput = measurement?.throughput_tok_per_sec ?? 0;
    if (throughput <= 0) {
      blockedBy.add(`profile ${pendingPhrase({ code: 'unmeasured', profile: profile.name })}`);
      continue;
    }
    let added = 0;
    const preempted: string[] = [];
    while (reaches < tokensPerSec && count < model.max_replicas) {
      const step = nextStep(sim, model, profile, count);
      if (typeof step === 'string') {
        blockedBy.add(step);
        break;
      }
      preempted.push(...step.victims.map(victimPhrase));
      const placed = {
        model: model.name,
        profile: profile.name,
        resources: profile.resources,
        node: step.node,
      };
      sim = buildView(placedIn(sim.snapshot, placed, step.victims));
      added++;
      count++;
      reaches += throughput;
    }
    if (added > 0) {
      const tokens = added * throughput;
      plan.push({
        profile: profile.name,
        replicas: added,
        tokens_per_sec: tokens,
        ...(preempted.length && { preempts: preempted }),
      });
    }
  }
  if (reaches < tokensPerSec && count >= model.max_replicas)
    blockedBy.add(pendingPhrase({ code: 'max_replicas', max_replicas: model.max_replicas }));
  return { plan, reaches_tokens_per_sec: reaches, fits: reaches >= tokensPerSec, blocked_by: [...blockedBy] };
}
