import type { Load } from '../domain/model.ts';
import type { Sql } from './db.ts';

export async function putLoadReport(
  sql: Sql,
  model: string,
  source: string,
  inFlight: number,
  waiting: number,
) {
  await sql`
    insert into load_reports (model, source, in_flight, waiting, reported_at)
    values (${model}, ${source}, ${inFlight}, ${waiting}, now())
    on conflict (model, source) do update set in_flight = excluded.in_flight, waiting = excluded.waiting,
      reported_at = excluded.reported_at`;
}

/**
 * The load of each model: the latest report of each source, summed over the sources that are fresh at
 * `now`. When none is fresh the newest stale figures are returned, and the policy sees them as stale.
 */
export async function readLoad(
  sql: Sql,
  now: number,
  staleMs: number,
  model?: string,
): Promise<Record<string, Load>> {
  const rows = await sql<{ model: string; in_flight: number; waiting: number; reported_at: Date }[]>`
    select model, in_flight, waiting, reported_at from load_reports ${model ? sql`where model = ${model}` : sql``}`;
  const fresh = new Map<string, Load>();
  const newest = new Map<string, Load>();
  for (const row of rows) {
    const at = row.reported_at.getTime();
    const report = { in_flight: row.in_flight, waiting: row.waiting, reported_at: at };
    if (now - at <= staleMs) {
      const sum = fresh.get(row.model);
      fresh.set(
        row.model,
        sum
          ? {
              in_flight: sum.in_flight + report.in_flight,
              waiting: sum.waiting + report.waiting,
              reported_at: Math.max(sum.reported_at, at),
            }
          : report,
      );
    } else if ((newest.get(row.model)?.reported_at ?? -1) < at) {
      newest.set(row.model, report);
    }
  }
  return Object.fromEntries([...newest, ...fresh]);
}

/** Forgets a source's report (a replica that stopped reports nothing any more). */
export async function deleteLoadReport(sql: Sql, model: string, source: string) {
  await sql`delete from load_reports where model = ${model} and source = ${source}`;
}
