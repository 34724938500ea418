import type { NodeState, ReplicaState } from '../domain/cluster.ts';
import { type Sql, transaction } from './db.ts';
import { recordNote } from './decisions.ts';

/** What a node's agent runs that the store still wants: the agent stops any other engine it finds. */
export interface WantedReplica {
  id: string;
  state: ReplicaState;
}

/** When each agent's node last heard from its agent (ISO 8601), by node name. */
export async function lastHeartbeats(sql: Sql): Promise<Map<string, string>> {
  const rows = await sql<{ name: string; heartbeat_at: Date }[]>`
    select name, heartbeat_at from nodes where heartbeat_at is not null`;
  return new Map(rows.map((row) => [row.name, row.heartbeat_at.toISOString()]));
}

/**
 * Records that a node's agent lives. A lost node is back (`back`) as it was lost: ready or cordoned; the answer names the replicas
 * the store wants on the node (starting, ready or draining), null when no agent's node has that name.
 * Its lost replicas are stopped: the agent stops every engine the answer does not name. They keep the
 * time they were lost (what the start backoff reads), and their reason says what became of them.
 */
export async function heartbeat(
  sql: Sql,
  node: string,
): Promise<{ state: NodeState; back: boolean; wanted: WantedReplica[] } | null> {
  return transaction(sql, async (tx) => {
    const [row] = await tx<{ state: NodeState; lost_from: NodeState | null }[]>`
      select state, lost_from from nodes where name = ${node} and driver = 'agent' for update`;
    if (!row) return null;
    await tx`update nodes set heartbeat_at = now(), lost_from = null,
      state = case when state = 'lost' then coalesce(lost_from, 'ready') else state end
      where name = ${node}`;
    await tx`update replicas set state = 'stopped',
        reason = coalesce(reason || '; ', '') || 'its agent came back and stopped its engine'
      where node = ${node} and state = 'lost'`;
    const wanted = await tx<WantedReplica[]>`
      select id, state from replicas where node = ${node} and state in ('starting', 'ready', 'draining')
      order by id`;
    const back = row.state === 'lost';
    return { state: back ? (row.lost_from ?? 'ready') : row.state, back, wanted: [...wanted] };
  });
}

/**
 * Marks lost the agents' nodes silent for longer than `silentMs`, and the Kubernetes nodes not Ready
 * for as long (their heartbeat_at is when they last were: store/kubernetes-nodes.ts) (ready or cordoned ones: a node taken
 * down is no one's to lose), and every replica that held room on a lost node, each with a note in its
 * model's history. Returns the models whose replicas were lost: their reconcilers replace them.
 */
export async function loseSilentNodes(
  sql: Sql,
  silentMs: number,
): Promise<{ nodes: string[]; models: string[] }> {
  return transaction(sql, async (tx) => {
    const nodes = await tx<{ name: string }[]>`
      update nodes set state = 'lost', lost_from = state
      where driver in ('agent', 'kubernetes') and state in ('ready', 'cordoned')
        and heartbeat_at < now() - ${silentMs} * interval '1 millisecond'
      returning name`;
    // Every lost node's, not only the newly lost: a replica reserved there as it was lost is lost too.
    const lost = await tx<{ id: string; model: string; node: string; reason: string }[]>`
      update replicas r set state = 'lost', updated_at = now(),
        reason = 'node ' || r.node || case when n.driver = 'kubernetes' then ' was not Ready'
          else '''s agent was silent' end || ' for over ' || ${Math.round(silentMs / 1000)} || ' s; replaced elsewhere'
      from nodes n
      where n.name = r.node and n.state = 'lost' and r.state in ('pending', 'starting', 'ready', 'draining')
      returning r.id, r.model, r.node, r.reason`;
    for (const replica of lost) {
      await recordNote(
        tx as unknown as Sql,
        replica.model,
        'lost',
        `replica ${replica.id} lost: ${replica.reason}`,
        {
          replica: replica.id,
          node: replica.node,
        },
      );
    }
    return { nodes: nodes.map((n) => n.name), models: [...new Set(lost.map((r) => r.model))] };
  });
}
