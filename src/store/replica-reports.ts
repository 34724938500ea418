import type { ReplicaState } from '../domain/cluster.ts';
import { engineEndpoint } from '../domain/node-grant.ts';
import { type Sql, transaction } from './db.ts';
import { recordNote } from './decisions.ts';

/** What an agent says of a replica its node runs: ready with its engine's port on the node, never a URL. */
export type ReplicaReport =
  | { state: 'ready'; port: number }
  | { state: 'failed'; reason: string }
  | { state: 'stopped' };

/**
 * Applies an agent's report to a replica of its node: ready from starting, serving at the node's own
 * address (its agent token's) and the port reported, or failed when the node has no address;
 * failed from starting (a failed start), crashed from ready (its engine ended after serving), and an
 * engine that ends while draining has stopped; stopped from draining. A failure or crash is noted in
 * its model's decisions with its reason. A late or repeated report changes nothing. Returns the
 * replica's model and whether it moved, or null when the node holds no such replica. `podAddress`: a
 * Kubernetes replica serves at its pod's IP, which the API server said (never an agent), not the node's.
 */
export async function applyReplicaReport(
  sql: Sql,
  node: string,
  id: string,
  report: ReplicaReport,
  podAddress?: string,
): Promise<{ model: string; moved: boolean; state: ReplicaState } | null> {
  return transaction(sql, async (tx) => {
    const [found] = await tx<{ model: string; state: ReplicaState; address: string | null }[]>`
      select r.model, r.state, n.address from replicas r join nodes n on n.name = r.node
      where r.id = ${id} and r.node = ${node} for update of r`;
    if (!found) return null;
    const row = podAddress ? { ...found, address: podAddress } : found;
    // A node without an address (none of its agent's registrations gave one) serves nowhere.
    const said: ReplicaReport =
      report.state === 'ready' && !row.address
        ? { state: 'failed', reason: `node ${node} has no address: its agent registered without one` }
        : report;
    const to: ReplicaState | null =
      said.state === 'ready'
        ? row.state === 'starting'
          ? 'ready'
          : null
        : row.state === 'draining'
          ? 'stopped'
          : said.state === 'failed' && row.state === 'starting'
            ? 'failed'
            : said.state === 'failed' && row.state === 'ready'
              ? 'crashed'
              : null;
    if (!to) return { model: row.model, moved: false, state: row.state };
    const reason = said.state === 'failed' ? said.reason : null;
    const endpoint = said.state === 'ready' && row.address ? engineEndpoint(row.address, said.port) : null;
    await tx`update replicas set state = ${to}, reason = coalesce(${reason}, reason), endpoint = ${endpoint},
      updated_at = now() where id = ${id}`;
    if (reason && (to === 'failed' || to === 'crashed')) {
      const what =
        to === 'crashed' ? `crashed on node ${node} after serving` : `failed to start on node ${node}`;
      await recordNote(tx as unknown as Sql, row.model, to, `replica ${id} ${what}: ${reason}`, {
        replica: id,
        node,
      });
    }
    return { model: row.model, moved: true, state: to };
  });
}
