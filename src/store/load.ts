import { TooMany } from '../domain/errors.ts';
import { type Load, MAX_REPORTED_REQUESTS } from '../domain/model.ts';
import { type Db, type Sql, transaction } from './db.ts';
import { lockUntilCommit } from './locks.ts';

/** How many sources a model may report from, and when a report no longer counts. */
export interface LoadBounds {
  now: number;
  staleMs: number;
  maxSources: number;
}

/**
 * Stores a source's report (the latest of each source counts) and deletes the model's reports that
 * expired: once this one is stored they count for nothing, and so a model keeps at most `maxSources`
 * reports. A new source beyond `maxSources` fresh ones is refused (TooMany) and nothing is stored.
 */
export async function putLoadReport(
  sql: Sql,
  model: string,
  source: string,
  inFlight: number,
  waiting: number,
  bounds: LoadBounds,
  waitingSince?: number,
) {
  // Since when its requests wait: only while some do, and only when the source says.
  const since = waiting > 0 && waitingSince !== undefined ? new Date(waitingSince) : null;
  // A fresh source reporting again, as gateways do every second or so, adds no source: one statement.
  const [again] = await sql`
    with expired as (${deleteExpired(sql, model, source, bounds)})
    update load_reports set in_flight = ${inFlight}, waiting = ${waiting}, waiting_since = ${since},
      reported_at = now()
    where model = ${model} and source = ${source} and reported_at >= ${expiry(bounds)}
    returning source`;
  if (again) return;
  // A new source (or one silent too long) is counted, with the model's other new sources waiting.
  await transaction(sql, async (tx) => {
    await lockUntilCommit(tx, 'loadSources', model);
    const [{ others }] = await tx<{ others: number }[]>`
      select count(*)::int as others from load_reports
      where model = ${model} and source <> ${source} and reported_at >= ${expiry(bounds)}`;
    if (others >= bounds.maxSources) {
      const silentS = Math.round(bounds.staleMs / 1000);
      throw new TooMany(
        `model ${model} already has ${others} load sources reporting and takes at most ${bounds.maxSources} (LLMGW_LOAD_SOURCES_MAX); report as one of them, or wait until one has been silent for ${silentS} s`,
      );
    }
    await tx`
      insert into load_reports (model, source, in_flight, waiting, waiting_since, reported_at)
      values (${model}, ${source}, ${inFlight}, ${waiting}, ${since}, now())
      on conflict (model, source) do update set in_flight = excluded.in_flight, waiting = excluded.waiting,
        waiting_since = excluded.waiting_since, reported_at = excluded.reported_at`;
    await deleteExpired(tx, model, source, bounds);
  });
}

/** The model's reports but this source's that expired. */
const deleteExpired = (sql: Db, model: string, source: string, bounds: LoadBounds) => sql`
  delete from load_reports where model = ${model} and source <> ${source} and reported_at < ${expiry(bounds)}`;

/** Reports before this instant no longer count. */
const expiry = ({ now, staleMs }: LoadBounds) => new Date(now - staleMs);

/**
 * The load of each model: the latest report of each source, summed over the sources that are fresh at
 * `now`. Gateways (`gateway:*`) and replicas (`replica:*`) count the same requests, once each: so the
 * load is the larger of the gateways' sum and the other sources' sum, never both. When none is fresh
 * the newest stale figures are returned, and the policy sees them as stale. A sum's `waiting_since` is
 * the earliest of its waiting sources', and unknown (left out) when one of them did not say.
 */
export async function readLoad(
  sql: Sql,
  now: number,
  staleMs: number,
  model?: string,
): Promise<Record<string, Load>> {
  const rows = await sql<
    {
      model: string;
      source: string;
      in_flight: number;
      waiting: number;
      waiting_since: Date | null;
      reported_at: Date;
    }[]
  >`
    select model, source, in_flight, waiting, waiting_since, reported_at
    from load_reports ${model ? sql`where model = ${model}` : sql``}`;
  const fresh = new Map<string, { gateways?: Summed; others?: Summed }>();
  const newest = new Map<string, Summed>();
  for (const row of rows) {
    const at = row.reported_at.getTime();
    const report: Summed = {
      in_flight: row.in_flight,
      waiting: row.waiting,
      reported_at: at,
      ...(row.waiting > 0 && { since: row.waiting_since?.getTime() ?? null }),
    };
    if (now - at <= staleMs) {
      const sums = fresh.get(row.model) ?? {};
      const kind = row.source.startsWith(GATEWAY_SOURCE) ? 'gateways' : 'others';
      sums[kind] = sums[kind] ? added(sums[kind], report) : report;
      fresh.set(row.model, sums);
    } else if ((newest.get(row.model)?.reported_at ?? -1) < at) {
      newest.set(row.model, report);
    }
  }
  const larger = ({ gateways, others }: { gateways?: Summed; others?: Summed }): Summed => {
    if (!gateways || !others) return (gateways ?? others)!;
    const total = (load: Load) => load.in_flight + load.waiting;
    const reported_at = Math.max(gateways.reported_at, others.reported_at);
    return { ...(total(gateways) >= total(others) ? gateways : others), reported_at };
  };
  return Object.fromEntries(
    [...newest, ...[...fresh].map(([name, sums]) => [name, larger(sums)] as const)].map(
      ([name, sum]) => [name, asLoad(sum)] as const,
    ),
  );
}

/**
 * A sum of reports, and since when its requests wait (ms since epoch): left out when none wait, null
 * when one that waits did not say since when.
 */
type Summed = Load & { since?: number | null };

/** The load a sum shows: `waiting_since` only when every source that waits said since when. */
const asLoad = ({ since, ...load }: Summed): Load =>
  typeof since === 'number' ? { ...load, waiting_since: since } : load;

/** The earlier of two times requests wait since: unknown when either is (null), none when neither waits. */
function earliest(a: number | null | undefined, b: number | null | undefined): number | null | undefined {
  if (a === null || b === null) return null;
  if (a === undefined || b === undefined) return a ?? b;
  return Math.min(a, b);
}

/**
 * Marks every report of `source` fresh again, in one statement: a gateway's counts stand until it says
 * otherwise (gateway/load-reporter.ts), so it need not send each unchanged one again.
 */
export async function refreshLoadReports(sql: Sql, source: string): Promise<void> {
  await sql`update load_reports set reported_at = now() where source = ${source}`;
}

/** The prefix of the load sources of llmgw's gateways (`gateway:<instance>`). */
export const GATEWAY_SOURCE = 'gateway:';

/** Each report is bounded, and so is their sum: many sources make no more load than one may. */
const added = (sum: Summed, report: Summed): Summed => {
  const since = earliest(sum.since, report.since);
  return {
    in_flight: Math.min(sum.in_flight + report.in_flight, MAX_REPORTED_REQUESTS),
    waiting: Math.min(sum.waiting + report.waiting, MAX_REPORTED_REQUESTS),
    reported_at: Math.max(sum.reported_at, report.reported_at),
    ...(since !== undefined && { since }),
  };
};

/** Forgets a source's report (a replica that stopped reports nothing any more). */
export async function deleteLoadReport(sql: Sql, model: string, source: string) {
  await sql`delete from load_reports where model = ${model} and source = ${source}`;
}
