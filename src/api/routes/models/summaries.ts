import { z } from '@hono/zod-openapi';
import { ACTIVE_STATES, type Replica } from '../../../domain/cluster.ts';
import type { Profile } from '../../../domain/model.ts';
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
import { DecisionSchema } from './schemas.ts';

/** One model as the list shows it: live figures beside the newest decision, and which is newer. */
export const ModelViewSchema = z
  .object({
    name: z.string(),
    owner: z.string().openapi({ description: 'the owner scope key; "" when the model has none' }),
    owner_name: z.string().nullable(),
    min_replicas: z.number(),
    max_replicas: z.number(),
    target_tokens_per_sec: z.number().optional(),
    replicas: z.record(z.string(), z.number()),
    in_flight: z.number().nullable(),
    load_reported_at: z
      .string()
      .nullable()
      .openapi({ description: 'when the newest load report was made (fresh or not); null when never' }),
    capacity_at_slo: z.number(),
    status: z.string(),
    last_decision: DecisionSchema.nullable(),
    freshness: z.string().nullable().openapi({
      description:
        'null when last_decision saw the in_flight shown; else which is newer, e.g. "decided at T, on figures from before the load reported at T2 (it saw no known load, now 11 in flight)"',
    }),
  })
  .openapi('ModelSummary');

export type ModelSummary = z.infer<typeof ModelViewSchema>;

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

const statusOf = (deleting: boolean | undefined, decision: StoredDecision | null): string =>
  deleting
    ? 'deleting'
    : !decision
      ? 'new'
      : decision.inputs.pending
        ? 'pending'
        : decision.action === 'none'
          ? 'steady'
          : 'scaling';

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
      min_replicas: model.min_replicas,
      max_replicas: model.max_replicas,
      ...(model.target_tokens_per_sec === undefined
        ? {}
        : { target_tokens_per_sec: model.target_tokens_per_sec }),
      replicas: counts,
      in_flight: live,
      load_reported_at: reportedAt === null ? null : iso(reportedAt),
      capacity_at_slo: modelFigures(view, model).capacity,
      status: statusOf(model.deleting, decision),
      last_decision: decision && shown(decision),
      freshness: freshness(decision, { inFlight: live, reportedAt }),
    };
    return { summary, owner: model.owner, replicas, profiles: model.profiles };
  });
}
