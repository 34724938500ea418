import type { ReplicaState } from '../domain/cluster.ts';
import { type Sql, transaction } from './db.ts';

/** What an agent says of a replica its node runs. */
export type ReplicaReport =
  | { state: 'ready'; endpoint: string }
  | { state: 'failed'; reason: string }
  | { state: 'stopped' };

/**
 * Applies an agent's report to a replica of its node: ready (with where it serves) from starting;
 * failed from starting or ready, and an engine that ends while draining has stopped; stopped from
 * draining. A late or repeated report changes nothing. Returns the replica's model and whether it
 * moved, or null when the node holds no such replica.
 */
export async function applyReplicaReport(
  sql: Sql,
  node: string,
  id: string,
  report: ReplicaReport,
): Promise<{ model: string; moved: boolean; state: ReplicaState } | null> {
  return transaction(sql, async (tx) => {
    const [row] = await tx<{ model: string; state: ReplicaState }[]>`
      select model, state from replicas where id = ${id} and node = ${node} for update`;
    if (!row) return null;
    const to: ReplicaState | null =
      report.state === 'ready'
        ? row.state === 'starting'
          ? 'ready'
          : null
        : row.state === 'draining'
          ? 'stopped'
          : report.state === 'failed' && (row.state === 'starting' || row.state === 'ready')
            ? 'failed'
            : null;
    if (!to) return { model: row.model, moved: false, state: row.state };
    const reason = report.state === 'failed' ? report.reason : null;
    const endpoint = report.state === 'ready' ? report.endpoint : null;
    await tx`update replicas set state = ${to}, reason = coalesce(${reason}, reason), endpoint = ${endpoint},
      updated_at = now() where id = ${id}`;
    return { model: row.model, moved: true, state: to };
  });
}
