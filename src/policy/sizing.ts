import type { Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import type { Snapshot } from '../domain/snapshot.ts';
import { limitSentence, pendingPhrase } from './explain.ts';
import { holdings } from './holdings.ts';
import { blockingLimit } from './limits.ts';
import { modelFigures } from './model-figures.ts';
import { pickNode } from './placement.ts';
import { cannotMeetSlo } from './profiles.ts';
import { add, formatResources, subtract } from './resources.ts';
import { type View, viewOf } from './view.ts';

export interface SizingPlan {
  /** Replicas to add, per profile, and the throughput they add. */
  plan: { profile: string; replicas: number; tokens_per_sec: number }[];
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
 * How to reach T tokens/s (POLICY.md "Sizing for a throughput"), on top of what the model runs: the
 * measured throughput of its serving replicas counts first, and the plan lists the replicas to add,
 * which is what its reconciler will do once T is its target. Profiles are taken in trial order; each
 * adds `ceil(remaining / its throughput)` replicas, placed one at a time on a copy of the holdings
 * and the free room so that limits, room and max_replicas stop it where they would. Only free room
 * counts (no reclaim), and backed-off profiles are not known here.
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
  const holds = new Map<ScopeKey, Resources>(holdings(view));
  const free = new Map([...view.nodes.keys()].map((name) => [name, view.free(name)]));
  const blockedBy = new Set<string>();
  const plan: SizingPlan['plan'] = [];
  let reaches = figures.tokensPerSec;
  let count = figures.serving.length;

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
    while (reaches < tokensPerSec && count < model.max_replicas) {
      const block = blockingLimit(view, model.owner, profile.resources, holds);
      if (block) {
        blockedBy.add(`${limitSentence(view, block, profile.resources)} (profile ${profile.name})`);
        break;
      }
      const node = pickNode(view, profile, free);
      if (!node) {
        blockedBy.add(`no room for profile ${profile.name} (needs ${formatResources(profile.resources)})`);
        break;
      }
      for (const key of view.chain(model.owner)) holds.set(key, add(holds.get(key)!, profile.resources));
      free.set(node, subtract(free.get(node)!, profile.resources));
      added++;
      count++;
      reaches += throughput;
    }
    if (added > 0) plan.push({ profile: profile.name, replicas: added, tokens_per_sec: added * throughput });
  }
  if (reaches < tokensPerSec && count >= model.max_replicas)
    blockedBy.add(pendingPhrase({ code: 'max_replicas', max_replicas: model.max_replicas }));
  return { plan, reaches_tokens_per_sec: reaches, fits: reaches >= tokensPerSec, blocked_by: [...blockedBy] };
}
