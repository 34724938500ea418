import { ACTIVE_STATES } from '../domain/cluster.ts';
import { isPendingCode } from '../domain/decision.ts';
import type { Model } from '../domain/model.ts';
import { blockingLimit } from '../policy/limits.ts';
import { loadOf } from '../policy/load.ts';
import { modelFigures } from '../policy/model-figures.ts';
import type { View } from '../policy/view.ts';
import type { StoredDecision } from '../store/decisions.ts';
import type { Sample, StateFigures } from './state-gauge-definitions.ts';

type ModelGauges =
  | 'llmgw_model_replicas'
  | 'llmgw_model_in_flight'
  | 'llmgw_model_capacity_at_slo'
  | 'llmgw_model_pending'
  | 'llmgw_model_blocked_by_limit';

/** Each model's replicas, load and capacity as its reconciler weighs them, and why its newest decision waits. */
export function modelSeries(
  view: View,
  newest: ReadonlyMap<string, StoredDecision>,
): Pick<StateFigures, ModelGauges> {
  const series: Pick<StateFigures, ModelGauges> = {
    llmgw_model_replicas: [],
    llmgw_model_in_flight: [],
    llmgw_model_capacity_at_slo: [],
    llmgw_model_pending: [],
    llmgw_model_blocked_by_limit: [],
  };
  for (const model of view.models.values()) {
    const labels = { model: model.name };
    series.llmgw_model_replicas.push(...replicaCounts(view, model));
    const load = loadOf(view, model.name);
    if (load.inFlight !== null) series.llmgw_model_in_flight.push({ labels, value: load.inFlight });
    series.llmgw_model_capacity_at_slo.push({ labels, value: modelFigures(view, model).capacity });

    const reasons = pendingLabels(newest.get(model.name)?.inputs.pending);
    for (const reason of reasons)
      series.llmgw_model_pending.push({ labels: { ...labels, reason }, value: 1 });
    if (reasons.includes('limit')) series.llmgw_model_blocked_by_limit.push(...blockingLimits(view, model));
  }
  return series;
}

/**
 * The `reason` labels of a stored decision's `pending`: each code once, in order; none when it waits
 * for nothing. A decision stored before codes (its `pending` a sentence) or with a code this version
 * does not know is 'other', so that label values stay bounded.
 */
export function pendingLabels(pending: unknown): string[] {
  if (!pending) return [];
  const codes = (Array.isArray(pending) ? pending : []).map((item: unknown) =>
    typeof item === 'object' && item !== null && 'code' in item && isPendingCode(item.code)
      ? item.code
      : 'other',
  );
  return codes.length > 0 ? [...new Set(codes)] : ['other'];
}

/** Every profile in every active state, zero included, so that a dashboard's lines do not break off. */
function replicaCounts(view: View, model: Model): Sample[] {
  const replicas = view.replicasOfModel(model.name);
  // A profile removed from the spec may still run replicas until they drain.
  const profiles = new Set([...model.profiles.map((p) => p.name), ...replicas.map((r) => r.profile)]);
  return [...profiles].flatMap((profile) =>
    ACTIVE_STATES.map((state) => ({
      labels: { model: model.name, profile, state },
      value: replicas.filter((r) => r.profile === profile && r.state === state).length,
    })),
  );
}

/** The limits that stop the model's profiles now: one sample per scope and resource. */
function blockingLimits(view: View, model: Model): Sample[] {
  const blocks = new Map<string, Sample>();
  for (const profile of model.profiles) {
    const block = blockingLimit(view, model.owner, profile.resources);
    if (!block) continue;
    blocks.set(`${block.scope} ${block.dimension}`, {
      labels: {
        model: model.name,
        scope: block.scope,
        name: view.displayName(block.scope),
        resource: block.dimension,
      },
      value: 1,
    });
  }
  return [...blocks.values()];
}
