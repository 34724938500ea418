import type { ClusterNode, Replica } from '../domain/cluster.ts';
import type { Resources } from '../domain/resources.ts';
import { type Sql, transaction } from './db.ts';
import { recordNote } from './decisions.ts';
import { lockUntilCommit } from './locks.ts';
import { getReplica, listReplicas, transition } from './replicas.ts';

// The reservation's SQL and its locks. What is reserved, and whether it may be, is decided by
// src/placement/ under these locks: the store reads and writes, it does not plan.

/**
 * Runs `work` in one transaction that holds the reservation lock until it commits: every reservation
 * takes it, so each one sees the ones before it.
 */
export function underReservationLock<T>(sql: Sql, work: (tx: Sql) => Promise<T>): Promise<T> {
  return transaction(sql, async (txn) => {
    await lockUntilCommit(txn, 'reservations');
    return work(txn as unknown as Sql);
  });
}

/** How many of these replica IDs are stored: a first one that is means its burst is reserved already. */
export async function countExisting(tx: Sql, replicaIds: readonly string[]): Promise<number> {
  const existing = await tx<{ id: string }[]>`select id from replicas where id in ${tx(replicaIds)}`;
  return existing.length;
}

/** Inserts a replica reserved on `node` as pending. */
export async function insertPending(
  tx: Sql,
  replica: { id: string; model: string; profile: string; node: string; resources: Resources; reason: string },
) {
  await tx`
    insert into replicas (id, model, profile, node, resources, state, reason)
    values (${replica.id}, ${replica.model}, ${replica.profile}, ${replica.node}, ${tx.json(replica.resources)},
      'pending', ${replica.reason})`;
}

/**
 * Marks a victim draining in the place of the replica reserved for it (`reclaimedFor`; `preemptedFor`,
 * the model a preemption is for), and keeps a note in its model's history. Victims have started (a
 * pending replica is never one): their room counts once, with the replica reserved in their place.
 */
export async function drainVictim(
  tx: Sql,
  victim: { replica: string; model: string; node: string },
  why: {
    reason: string;
    action: string;
    note: string;
    preemptedFor: string | null;
    reclaimedFor: string;
    inputs: Record<string, unknown>;
  },
) {
  await tx`update replicas
    set state = 'draining', reason = ${why.reason}, preempted_for = ${why.preemptedFor},
      reclaimed_for = ${why.reclaimedFor}, updated_at = now()
    where id = ${victim.replica} and state in ('starting', 'ready')`;
  await recordNote(tx, victim.model, why.action, why.note, {
    replica: victim.replica,
    node: victim.node,
    inputs: why.inputs,
  });
}

/** What a reserved replica's start is weighed on, read under its node's row lock; or why it is not. */
export type StartRoom =
  | {
      node: ClusterNode;
      replica: Replica;
      /** The node's active replicas, in reservation order. */
      onNode: Replica[];
      /** The replicas draining for the replica's model, and for this replica. */
      drainingFor: Replica[];
    }
  | { gone: string }
  | { starting: Replica };

/**
 * Runs `work` on the room of a reserved replica's node in one transaction that holds the node's row
 * lock: two starts on a node never both see the same room. A replica already starting, or no longer
 * pending, is given as such, not read further.
 */
export function underNodeLock<T>(
  sql: Sql,
  replicaId: string,
  work: (tx: Sql, room: StartRoom) => Promise<T>,
): Promise<T> {
  return transaction(sql, async (txn): Promise<T> => {
    const tx = txn as unknown as Sql;
    const [row] = await tx<{ node: string }[]>`select node from replicas where id = ${replicaId}`;
    if (!row) return work(tx, { gone: `there is no replica ${replicaId}` });
    const [node] = await tx<ClusterNode[]>`
      select name, capacity, gpu_model, labels, state from nodes where name = ${row.node} for update`;
    if (!node) return work(tx, { gone: `node ${row.node} is gone` });
    const replica = (await getReplica(tx, replicaId))!;
    if (replica.state === 'starting') return work(tx, { starting: replica });
    if (replica.state !== 'pending') return work(tx, { gone: `replica ${replicaId} is ${replica.state}` });
    const onNode = await listReplicas(tx, { node: node.name, activeOnly: true, inReservationOrder: true });
    // Read through their indexes (migrations 008, 018).
    const drainingFor = [
      ...(await listReplicas(tx, { state: 'draining', preemptedFor: replica.model })),
      ...(await listReplicas(tx, { state: 'draining', reclaimedFor: replicaId })),
    ];
    return work(tx, { node, replica, onNode, drainingFor });
  });
}

/** Marks a pending replica starting (under its node's lock, underNodeLock). */
export async function markStarting(tx: Sql, replicaId: string) {
  await transition(tx, replicaId, ['pending'], 'starting');
}
