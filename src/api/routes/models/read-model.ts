import type { ModelSummary } from '../../../contracts/schemas/models.ts';
import { ACTIVE_STATES, type Replica } from '../../../domain/cluster.ts';
import type { Profile } from '../../../domain/model.ts';
import { modelStatus } from '../../../domain/model-status.ts';
import type { ScopeKey } from '../../../domain/scope.ts';
import type { PolicySettings } from '../../../domain/snapshot.ts';
import { inFlight } from '../../../policy/explain.ts';
import { loadOf } from '../../../policy/load.ts';
import { modelFigures } from '../../../policy/model-figures.ts';
import { buildView } from '../../../policy/view.ts';
import type { Sql } from '../../../store/db.ts';
import { latestDecisions, type StoredDecision } from '../../../store/decisions.ts';
import { listModels } from '../../../store/models.ts';
import { readSnapshot } from '../../../store/snapshot.ts';

// The models' read model: what GET /models and GET /models/{name} show, from the store's figures.

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * Null when the newest decision saw the load shown beside it; else which is newer, e.g. "decided at T,
 * on figures from before the load reported at T2 (it saw no known load, now 11 in flight)". A pass
 * records a decision only when what it does changes, so the newest decision may be older than the
 * live figures; this says so rather than let the two disagree in silence.
 */
export function freshness(
  decision: StoredDecision | null,
  load: { inFlight: number | null; reportedAt: number | null },
): string | null {
  // Notes (a replica reclaimed from the model) are not passes: they saw no load.
  if (!decision || !('in_flight' in decision.inputs)) return null;
  const seen = decision.inputs.in_flight as number | null;
  if (seen === load.inFlight) return null;
  const decided = `decided at ${decision.at}`;
  if (load.inFlight !== null && load.reportedAt !== null) {
    return (
      `${decided}, on figures from before the load reported at ${iso(load.reportedAt)} ` +
      `(it saw ${seen === null ? 'no known load' : inFlight(seen)}, now ${inFlight(load.inFlight)})`
    );
  }
  if (seen === null) return null;
  const last = load.reportedAt === null ? 'no report is left' : `last reported at ${iso(load.reportedAt)}`;
  return `${decided}, when ${inFlight(seen)} was known; the load is unknown now (${last})`;
}

/**
 * The models named (all without names) with their replica counts, load and capacity at SLO, and the
 * newest decision as `shown` lets the caller read it. The decisions are read before the figures, so
 * that no figure shown predates the decision beside it; where they differ, `freshness` says so.
 */
export async function modelSummaries(
  sql: Sql,
  now: number,
  settings: PolicySettings,
  shown: (decision: StoredDecision) => StoredDecision,
  names?: string[],
): Promise<
  { summary: ModelSummary; owner: ScopeKey | null; replicas: readonly Replica[]; profiles: Profile[] }[]
> {
  const models = await listModels(sql, names);
  const last = await latestDecisions(
    sql,
    models.map((model) => model.name),
  );
  const snapshot = await readSnapshot(sql, now, settings);
  const view = buildView(snapshot);
  return models.map((model) => {
    const replicas = view.replicasOfModel(model.name);
    const counts = Object.fromEntries(ACTIVE_STATES.map((state) => [state, 0]));
    for (const replica of replicas) counts[replica.state]++;
    const decision = last.get(model.name) ?? null;
    const live = loadOf(view, model.name).inFlight;
    const reportedAt = snapshot.load[model.name]?.reported_at ?? null;
    const summary: ModelSummary = {
      name: model.name,
      owner: model.owner ?? '',
      owner_name: model.owner ? view.displayName(model.owner) : null,
      priority: model.priority ?? 0,
      min_replicas: model.min_replicas,
      max_replicas: model.max_replicas,
      ...(model.target_tokens_per_sec === undefined
        ? {}
        : { target_tokens_per_sec: model.target_tokens_per_sec }),
      replicas: counts,
      in_flight: live,
      load_reported_at: reportedAt === null ? null : iso(reportedAt),
      capacity_at_slo: modelFigures(view, model).capacity,
      status: modelStatus(
        model.deleting ?? false,
        decision && { action: decision.action, pending: decision.inputs.pending },
      ),
      last_decision: decision && shown(decision),
      freshness: freshness(decision, { inFlight: live, reportedAt }),
    };
    return { summary, owner: model.owner, replicas, profiles: model.profiles };
  });
}
