import type { Replica, ReplicaState } from '../domain/cluster.ts';
import type { Db, Sql } from './db.ts';

type ReplicaRow = Omit<Replica, 'created_at' | 'preempted_for'> & {
  created_at: Date;
  preempted_for: string | null;
};
/** `preempted_for` only when set: most replicas free room for nobody. */
const toReplica = ({ preempted_for, ...row }: ReplicaRow): Replica => ({
  ...row,
  created_at: row.created_at.getTime(),
  ...(preempted_for === null ? {} : { preempted_for }),
});

/** Records where a replica serves (null: nowhere any more). */
export async function setEndpoint(sql: Sql, id: string, endpoint: string | null): Promise<void> {
  await sql`update replicas set endpoint = ${endpoint} where id = ${id}`;
}

export interface ReplicaFilter {
  model?: string;
  node?: string;
  state?: ReplicaState;
  /** Only replicas that hold room (not stopped, not failed). */
  activeOnly?: boolean;
  /** In the order they were reserved, instead of oldest first. */
  inReservationOrder?: boolean;
}

export async function listReplicas(sql: Db, filter: ReplicaFilter = {}): Promise<Replica[]> {
  const rows = await sql<ReplicaRow[]>`
    select id, model, profile, node, resources, state, created_at, endpoint, preempted_for from replicas
    where true
      ${filter.model ? sql`and model = ${filter.model}` : sql``}
      ${filter.node ? sql`and node = ${filter.node}` : sql``}
      ${filter.state ? sql`and state = ${filter.state}` : sql``}
      ${filter.activeOnly ? sql`and state not in ('stopped', 'failed', 'lost')` : sql``}
    ${filter.inReservationOrder ? sql`order by seq` : sql`order by created_at, id`}`;
  return rows.map(toReplica);
}

/**
 * The active replicas reserved after `seq` (all of them for 0), and the last seq among them (`seq` when
 * none). Replicas are inserted only under the reservation lock, which commits them in seq order: a read
 * sees every replica up to the last seq it returns (store/reservations.ts counts on it).
 */
export async function activeReplicasAfter(
  sql: Db,
  seq = 0,
): Promise<{ replicas: Replica[]; lastSeq: number }> {
  const rows = await sql<(ReplicaRow & { seq: string })[]>`
    select id, model, profile, node, resources, state, created_at, endpoint, preempted_for, seq from replicas
    where seq > ${seq} and state not in ('stopped', 'failed', 'lost') order by seq`;
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
 * How the model's replicas of the last `windowMs` fared, for the start backoff. A lost replica (its
 * node's agent went silent) says nothing of how its profile starts, so it is left out.
 */
export async function recentOutcomes(sql: Sql, model: string, windowMs: number) {
  const rows = await sql<{ profile: string; state: ReplicaState; at: Date }[]>`
    select profile, state, updated_at as at from replicas
    where model = ${model} and state <> 'lost' and updated_at > now() - ${windowMs} * interval '1 millisecond'`;
  return rows.map((row) => ({ profile: row.profile, state: row.state, at: row.at.getTime() }));
}

export async function getReplica(sql: Db, id: string): Promise<Replica | undefined> {
  const [row] = await sql<ReplicaRow[]>`
    select id, model, profile, node, resources, state, created_at, endpoint, preempted_for from replicas where id = ${id}`;
  return row ? toReplica(row) : undefined;
}

/** Models with a replica reserved on the node: room freed there may be what they wait for. */
export async function modelsWaitingOn(sql: Sql, node: string): Promise<string[]> {
  const rows = await sql<{ model: string }[]>`
    select distinct model from replicas where state = 'pending' and node = ${node}`;
  return rows.map((row) => row.model);
}
