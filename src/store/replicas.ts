import { ACTIVE_STATES, type Replica, type ReplicaState } from '../domain/cluster.ts';
import { START_OUTCOMES_WINDOW_MS, type StartOutcome } from '../domain/snapshot.ts';
import type { Db, Sql } from './db.ts';

type ReplicaRow = Omit<Replica, 'created_at' | 'preempted_for' | 'reclaimed_for'> & {
  created_at: Date;
  preempted_for: string | null;
  reclaimed_for: string | null;
};
/** `preempted_for` and `reclaimed_for` only when set: most replicas free room for nobody. */
const toReplica = ({ preempted_for, reclaimed_for, ...row }: ReplicaRow): Replica => ({
  ...row,
  created_at: row.created_at.getTime(),
  ...(preempted_for === null ? {} : { preempted_for }),
  ...(reclaimed_for === null ? {} : { reclaimed_for }),
});

/** Records where a replica serves (null: nowhere any more). */
export async function setEndpoint(sql: Sql, id: string, endpoint: string | null): Promise<void> {
  await sql`update replicas set endpoint = ${endpoint} where id = ${id}`;
}

export interface ReplicaFilter {
  model?: string;
  node?: string;
  state?: ReplicaState;
  /** Only replicas drained for a preemption by this model (policy/reservation.ts startRefusal). */
  preemptedFor?: string;
  /** Only the victims drained for this replica, reserved in their place (startRefusal). */
  reclaimedFor?: string;
  /** Only replicas that hold room (not stopped, failed, crashed or lost). */
  activeOnly?: boolean;
  /** In the order they were reserved, instead of oldest first. */
  inReservationOrder?: boolean;
}

/** A replica as the API shows it: with the reason of its last move (why it failed, crashed, was lost). */
export type ReplicaShown = Replica & { reason: string | null };

/** Replicas with their reasons (ReplicaShown), for those who read them. */
export async function listReplicasShown(sql: Db, filter: ReplicaFilter = {}): Promise<ReplicaShown[]> {
  return (await listReplicas(sql, filter, true)) as ReplicaShown[];
}

export async function listReplicas(
  sql: Db,
  filter: ReplicaFilter = {},
  withReason = false,
): Promise<Replica[]> {
  const rows = await sql<ReplicaRow[]>`
    select id, model, profile, node, resources, state, created_at, endpoint, preempted_for, reclaimed_for
      ${withReason ? sql`, reason` : sql``} from replicas
    where true
      ${filter.model ? sql`and model = ${filter.model}` : sql``}
      ${filter.node ? sql`and node = ${filter.node}` : sql``}
      ${filter.state ? sql`and state = ${filter.state}` : sql``}
      ${filter.preemptedFor ? sql`and preempted_for = ${filter.preemptedFor}` : sql``}
      ${filter.reclaimedFor ? sql`and reclaimed_for = ${filter.reclaimedFor}` : sql``}
      ${filter.activeOnly ? sql`and state not in ('stopped', 'failed', 'crashed', 'lost')` : sql``}
    ${filter.inReservationOrder ? sql`order by seq` : sql`order by created_at, id`}`;
  return rows.map(toReplica);
}

/**
 * The active replicas reserved after `seq` (all of them for 0), and the last seq among them (`seq` when
 * none). Replicas are inserted only under the reservation lock, which commits them in seq order: a read
 * sees every replica up to the last seq it returns (placement/reserve.ts counts on it).
 */
export async function activeReplicasAfter(
  sql: Db,
  seq = 0,
): Promise<{ replicas: Replica[]; lastSeq: number }> {
  const rows = await sql<(ReplicaRow & { seq: string })[]>`
    select id, model, profile, node, resources, state, created_at, endpoint, preempted_for, reclaimed_for, seq from replicas
    where seq > ${seq} and state not in ('stopped', 'failed', 'crashed', 'lost') order by seq`;
  return {
    replicas: rows.map(({ seq: _, ...row }) => toReplica(row)),
    lastSeq: rows.length > 0 ? Number(rows.at(-1)!.seq) : seq,
  };
}

/**
 * Moves a replica to `to` when it is in one of `from` (so a retried or late call changes nothing twice);
 * returns whether it moved.
 */
export async function transition(
  sql: Db,
  id: string,
  from: readonly ReplicaState[],
  to: ReplicaState,
  reason?: string,
): Promise<boolean> {
  const rows = await sql`
    update replicas set state = ${to}, reason = coalesce(${reason ?? null}, reason), updated_at = now()
    where id = ${id} and state in ${sql(from as ReplicaState[])} returning id`;
  return rows.length > 0;
}

/**
 * The active replicas as one statement saw them, in reservation order, and what lets the next read ask
 * only for what changed since: `watermark`, the oldest transaction still running when it read (any row
 * it could not see was written by that transaction or a later one), and the last seq it saw.
 */
export interface ActiveReplicas {
  byId: ReadonlyMap<string, Replica>;
  lastSeq: number;
  watermark: string;
}

type ChangedRow = Omit<ReplicaRow, 'created_at'> & { created_at: string; seq: number };

/**
 * The active replicas now: given the previous read, the rows written since its watermark are read and
 * merged into it (a row that stopped, failed or was lost leaves), so a read costs what changed rather
 * than every active replica. The number of active rows comes in the same statement: a merge that does
 * not come to it (rows deleted, as tests truncate) is thrown away for a read of them all.
 */
export async function readActiveReplicas(sql: Sql, previous?: ActiveReplicas): Promise<ActiveReplicas> {
  const [row] = await sql<{ watermark: string; active: number; changed: ChangedRow[] }[]>`
    select pg_snapshot_xmin(pg_current_snapshot())::text as watermark,
      (select count(*)::int from replicas where state not in ('stopped', 'failed', 'crashed', 'lost')) as active,
      coalesce((select json_agg(r order by r.seq) from (
        select id, model, profile, node, resources, state, created_at, endpoint, preempted_for, reclaimed_for, seq
        from replicas
        where ${previous ? sql`changed_xid >= ${previous.watermark}::xid8` : sql`state not in ('stopped', 'failed', 'crashed', 'lost')`}
      ) r), '[]') as changed`;
  const byId = new Map(previous?.byId ?? []);
  let lastSeq = previous?.lastSeq ?? 0;
  for (const { seq, ...changed } of row.changed) {
    const replica = toReplica({ ...changed, created_at: new Date(changed.created_at) });
    if (ACTIVE_STATES.includes(replica.state)) byId.set(replica.id, replica);
    else byId.delete(replica.id);
    lastSeq = Math.max(lastSeq, seq);
  }
  if (previous && byId.size !== row.active) return readActiveReplicas(sql);
  return { byId, lastSeq, watermark: row.watermark };
}

/**
 * How the model's replicas of the last `windowMs` fared, for the start backoff. A lost replica (its
 * node's agent went silent) says nothing of how its profile starts, so it is left out.
 */
export async function recentOutcomes(sql: Sql, model: string, windowMs: number) {
  const rows = await sql<{ profile: string; state: ReplicaState; at: Date }[]>`
    select profile, state, updated_at as at from replicas
    where model = ${model} and state <> 'lost' and updated_at > now() - ${windowMs} * interval '1 millisecond'`;
  return rows.map((row) => ({ profile: row.profile, state: row.state, at: row.at.getTime() }));
}

/**
 * The recent start outcomes of every model that failed a start or crashed in the last `windowMs`, by
 * model: what the policy derives the other models' backoff from (Snapshot.startOutcomes). Models
 * without a recent failure are not read; lost replicas say nothing of how a profile starts.
 */
export async function recentStartOutcomes(
  sql: Sql,
  windowMs = START_OUTCOMES_WINDOW_MS,
): Promise<Record<string, StartOutcome[]>> {
  const rows = await sql<{ model: string; profile: string; state: ReplicaState; at: Date }[]>`
    select model, profile, state, updated_at as at from replicas
    where state <> 'lost' and updated_at > now() - ${windowMs} * interval '1 millisecond'
      and model in (select model from replicas
        where state in ('failed', 'crashed') and updated_at > now() - ${windowMs} * interval '1 millisecond')`;
  const byModel: Record<string, StartOutcome[]> = {};
  for (const row of rows) {
    const outcome = { profile: row.profile, state: row.state, at: row.at.getTime() };
    byModel[row.model] = [...(byModel[row.model] ?? []), outcome];
  }
  return byModel;
}

export async function getReplica(sql: Db, id: string): Promise<Replica | undefined> {
  const [row] = await sql<ReplicaRow[]>`
    select id, model, profile, node, resources, state, created_at, endpoint, preempted_for, reclaimed_for from replicas where id = ${id}`;
  return row ? toReplica(row) : undefined;
}

/** Models with a replica reserved on the node: room freed there may be what they wait for. */
export async function modelsWaitingOn(sql: Sql, node: string): Promise<string[]> {
  const rows = await sql<{ model: string }[]>`
    select distinct model from replicas where state = 'pending' and node = ${node}`;
  return rows.map((row) => row.model);
}
