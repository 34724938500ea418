import type { ScopeKey } from '../domain/scope.ts';
import type { Sql } from './db.ts';
import { type DecisionRow, type StoredDecision, toStored } from './decisions.ts';

// What changed since a cursor, for GET /api/v1/events, and the figures the console draws a model's
// last hour from: read from the tables every process writes, so any API process sees every change.

/** A decision as the events stream sends it, with its model's owner for the stream's visibility filter. */
export interface DecisionChange {
  id: number;
  model: string;
  owner: ScopeKey | null;
  decision: StoredDecision;
}

/** The newest decision's id (0 with none): a stream starts after it. */
export async function newestDecisionId(sql: Sql): Promise<number> {
  const [row] = await sql<{ id: string | null }[]>`select max(id) as id from decisions`;
  return Number(row?.id ?? 0);
}

/**
 * Decisions with an id above `since.after`, and those of the last `since.lateMs` among the 1,000 ids
 * before it (a transaction that commits late carries an id taken before others'), but none at or
 * below `since.floor`; oldest first, at most `limit`.
 */
export async function decisionsAfter(
  sql: Sql,
  since: { after: number; lateMs: number; floor: number },
  limit = 500,
): Promise<DecisionChange[]> {
  const rows = await sql<(DecisionRow & { id: string; model: string; owner: ScopeKey | null })[]>`
    select d.id, d.model, m.owner, d.at, d.action, d.reason, d.replica, d.profile, d.node, d.inputs
    from decisions d left join models m on m.name = d.model
    where d.id > ${since.floor} and (d.id > ${since.after}
      or (d.id > ${since.after - 1000} and d.at > now() - ${since.lateMs} * interval '1 millisecond'))
    order by d.id limit ${limit}`;
  return rows.map((row) => ({
    id: Number(row.id),
    model: row.model,
    owner: row.owner,
    decision: toStored(row),
  }));
}

export interface ReplicaChange {
  id: string;
  model: string;
  owner: ScopeKey | null;
  profile: string;
  node: string;
  state: string;
  /** The database's time of the change, kept exact (microseconds) as the next cursor. */
  updated_at: string;
}

/** The database's clock now, as a cursor for replicaChangesAfter. */
export async function storeNow(sql: Sql): Promise<string> {
  const [row] = await sql<{ now: string }[]>`select now()::text as now`;
  return row!.now;
}

/**
 * Replicas whose state or place changed after `since.after` less `since.lateMs` (changes committed late
 * carry the time their transaction began), but never at or before `since.floor`; oldest first. Times
 * are as storeNow gives them, and go as text, cast by the database: a timestamp parameter would be cut
 * to milliseconds.
 */
export async function replicaChangesAfter(
  sql: Sql,
  since: { after: string; lateMs: number; floor: string },
  limit = 500,
): Promise<ReplicaChange[]> {
  return sql<ReplicaChange[]>`
    select r.id, r.model, m.owner, r.profile, r.node, r.state, r.updated_at::text as updated_at
    from replicas r left join models m on m.name = r.model
    where r.updated_at > greatest(
      ${since.after}::text::timestamptz - ${since.lateMs} * interval '1 millisecond',
      ${since.floor}::text::timestamptz)
    order by r.updated_at limit ${limit}`;
}

/** One point of a model's load against its capacity, as a decision saw them. */
export interface LoadPoint {
  at: number;
  in_flight: number | null;
  capacity_at_slo: number;
}

/**
 * The figures of the passes of `models` since `sinceMs`, oldest first (notes carry none), starting with
 * the figures that held at `sinceMs`: those of the last pass before it, moved to `sinceMs`.
 */
export async function loadHistory(
  sql: Sql,
  sinceMs: number,
  models: string[],
): Promise<Map<string, LoadPoint[]>> {
  const history = new Map<string, LoadPoint[]>();
  if (models.length === 0) return history;
  const since = new Date(sinceMs);
  // Times as epoch milliseconds, as the sparkline draws them.
  const rows = await sql<{ model: string; at: number; in_flight: number | null; capacity: number | null }[]>`
    select m.name as model, (extract(epoch from p.at) * 1000)::float8 as at,
      (p.inputs->>'in_flight')::float8 as in_flight, (p.inputs->>'capacity_at_slo')::float8 as capacity
    from models m cross join lateral (
      (select id, at, inputs from decisions
       where model = m.name and at < ${since} and inputs ? 'capacity_at_slo' order by at desc limit 1)
      union all
      (select id, at, inputs from decisions
       where model = m.name and at >= ${since} and inputs ? 'capacity_at_slo')
    ) p where m.name in ${sql(models)} order by m.name, p.id`;
  for (const row of rows) {
    const point = {
      at: Math.max(row.at, sinceMs),
      in_flight: row.in_flight,
      capacity_at_slo: row.capacity ?? 0,
    };
    const points = history.get(row.model);
    if (points) points.push(point);
    else history.set(row.model, [point]);
  }
  return history;
}
