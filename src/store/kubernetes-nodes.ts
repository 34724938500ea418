import type { NodeInStep } from '../domain/kubernetes-work.ts';
import { type Sql, transaction } from './db.ts';

/**
 * Keeps the store's Kubernetes nodes as the cluster has them (src/cluster/kubernetes/node-sync.ts):
 * capacity, GPU model and labels; cordoned while spec.unschedulable, ready otherwise, but a node an admin
 * took down stays down and a lost one stays lost until it is Ready again. heartbeat_at is when its Ready
 * condition was last True, so that node-liveness.ts loses a node not Ready for LLMGW_NODE_LOST_S as it
 * loses a silent agent's. A node that is gone from the cluster is not refreshed, and so is lost in turn.
 */
export async function keepKubernetesNodes(sql: Sql, nodes: readonly NodeInStep[]): Promise<void> {
  if (nodes.length === 0) return;
  await transaction(sql, async (tx) => {
    for (const node of nodes) {
      await tx`
        insert into nodes (name, capacity, gpu_model, labels, driver, state, heartbeat_at)
        values (${node.name}, ${tx.json(node.capacity)}, ${node.gpu_model}, ${tx.json(node.labels)},
          'kubernetes', ${node.cordoned ? 'cordoned' : 'ready'}, ${node.readyAt})
        on conflict (name) do update set capacity = excluded.capacity, gpu_model = excluded.gpu_model,
          labels = excluded.labels, heartbeat_at = excluded.heartbeat_at,
          lost_from = case when nodes.state = 'lost' and ${node.ready} then null else nodes.lost_from end,
          state = case
            when nodes.state = 'down' then 'down'
            when nodes.state = 'lost' and not ${node.ready} then 'lost'
            else excluded.state end
        where nodes.driver = 'kubernetes'`;
    }
  });
}

/** The replicas the store still wants running (their pods are kept): any not ended. */
export async function activeReplicaIds(sql: Sql, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await sql<{ id: string }[]>`
    select id from replicas where id = any(${ids as string[]})
      and state in ('pending', 'starting', 'ready', 'draining')`;
  return new Set(rows.map((row) => row.id));
}

/** The ready replicas of Kubernetes nodes: each must have its pod, Ready or not yet ended. */
export async function readyKubernetesReplicas(
  sql: Sql,
): Promise<{ id: string; node: string; model: string }[]> {
  return sql<{ id: string; node: string; model: string }[]>`
    select r.id, r.node, r.model from replicas r join nodes n on n.name = r.node
    where n.driver = 'kubernetes' and r.state = 'ready'`;
}

/** Replicas of Kubernetes nodes starting for longer than `ms`: each should have its pod by then. */
export async function slowKubernetesStarts(sql: Sql, ms: number): Promise<string[]> {
  const rows = await sql<{ id: string }[]>`
    select r.id from replicas r join nodes n on n.name = r.node
    where n.driver = 'kubernetes' and r.state = 'starting'
      and r.updated_at < now() - ${ms} * interval '1 millisecond'`;
  return rows.map((row) => row.id);
}
