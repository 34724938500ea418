import type { ClusterNode, NodeState } from '../domain/cluster.ts';
import { engineEndpoint } from '../domain/node-grant.ts';
import { type Db, transaction } from './db.ts';

/** A node as the store keeps it: an agent's node also has the address its token gave (null before one). */
export type StoredNode = ClusterNode & { address: string | null };

export async function listNodes(sql: Db): Promise<StoredNode[]> {
  return sql<StoredNode[]>`
    select name, capacity, gpu_model, labels, state, driver, address from nodes order by name`;
}

export async function getNode(sql: Db, name: string): Promise<ClusterNode | undefined> {
  const [node] = await sql<ClusterNode[]>`
    select name, capacity, gpu_model, labels, state, driver from nodes where name = ${name}`;
  return node;
}

/**
 * Creates or updates a node; true when it is new. `address` is an agent's registration's (its token's);
 * a PUT without one keeps the node's. Capacity checks are the caller's (they need the
 * replicas). An agent's registration counts as its heartbeat: a lost node is ready again (node-liveness.ts).
 */
export async function putNode(
  sql: Db,
  node: Omit<ClusterNode, 'state'> & { address?: string },
): Promise<boolean> {
  // A PUT that names no driver keeps the one the node has (an agent's node stays one); a new node is sim.
  const given = node.driver ?? null;
  const [row] = await sql<{ created: boolean }[]>`
    insert into nodes (name, capacity, gpu_model, labels, driver, heartbeat_at, address)
    values (${node.name}, ${sql.json(node.capacity)}, ${node.gpu_model}, ${sql.json(node.labels)},
      ${given ?? 'sim'}, ${given === 'agent' ? sql`now()` : null}, ${node.address ?? null})
    on conflict (name) do update set capacity = excluded.capacity, gpu_model = excluded.gpu_model,
      address = coalesce(excluded.address, nodes.address),
      labels = excluded.labels, driver = coalesce(${given}::text, nodes.driver),
      heartbeat_at = case when ${given}::text is null then nodes.heartbeat_at else excluded.heartbeat_at end,
      state = case when nodes.state = 'lost' and excluded.driver = 'agent'
        then coalesce(nodes.lost_from, 'ready') else nodes.state end
    returning (xmax = 0) as created`;
  if (node.address) await readdressEndpoints(sql, node.name, node.address);
  return row.created;
}

/**
 * A node registered at another address (its agent's token re-issued) serves there only: the endpoints
 * its replicas were given at the old one move to the new one, port kept, so that the gateway never
 * sends a prompt to an address the node's current token does not name.
 */
async function readdressEndpoints(sql: Db, node: string, address: string): Promise<void> {
  const served = await sql<{ id: string; endpoint: string }[]>`
    select id, endpoint from replicas where node = ${node} and endpoint is not null`;
  for (const { id, endpoint } of served) {
    const moved = engineEndpoint(address, Number(new URL(endpoint).port || 80));
    if (moved !== endpoint) await sql`update replicas set endpoint = ${moved} where id = ${id}`;
  }
}

export async function setNodeState(sql: Db, name: string, state: NodeState): Promise<boolean> {
  const rows = await sql`update nodes set state = ${state} where name = ${name} returning name`;
  return rows.length > 0;
}

export async function deleteNode(sql: Db, name: string): Promise<'deleted' | 'missing' | 'in-use'> {
  return transaction(sql, async (tx) => {
    const [node] = await tx`select name from nodes where name = ${name} for update`;
    if (!node) return 'missing';
    const [active] =
      await tx`select 1 from replicas where node = ${name} and state not in ('stopped', 'failed', 'crashed', 'lost') limit 1`;
    if (active) return 'in-use';
    await tx`delete from nodes where name = ${name}`;
    return 'deleted';
  });
}
