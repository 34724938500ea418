import type { Replica } from '../domain/cluster.ts';
import { startRefusal } from '../policy/reservation.ts';
import type { Sql } from '../store/db.ts';
import { markStarting, underNodeLock } from '../store/reservations.ts';

export type StartAdmission = { admitted: true; replica: Replica } | { admitted: false; why: string };

/**
 * Lets a reserved replica start when what runs on its node and what was reserved there before it fit
 * (policy/reservation.ts), and marks it starting, under the store's lock of the node's row: two starts
 * on a node never both see the same room. A replica already starting is admitted again, so a retried
 * activity hands it to the driver once more; not yet is a normal answer.
 */
export function admitStart(sql: Sql, replicaId: string): Promise<StartAdmission> {
  return underNodeLock(sql, replicaId, async (tx, room): Promise<StartAdmission> => {
    if ('gone' in room) return { admitted: false, why: room.gone };
    if ('starting' in room) return { admitted: true, replica: room.starting };
    // startRefusal counts the replicas draining for the model, and for this replica.
    const why = startRefusal(room.node, room.onNode, replicaId, room.drainingFor);
    if (why) return { admitted: false, why };
    await markStarting(tx, replicaId);
    return { admitted: true, replica: { ...room.replica, state: 'starting' } };
  });
}
