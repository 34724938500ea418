import type { RouteHandler } from '@hono/zod-openapi';
import { identityOf } from '../../../auth/guard.ts';
import { ApiError } from '../../../contracts/errors.ts';
import { Conflict, NotFound } from '../../../domain/errors.ts';
import type { NodeGrant } from '../../../domain/node-grant.ts';
import { beyondBounds, breachSentence, type NodeDeclaration } from '../../../policy/node-bounds.ts';
import { nodeUsage } from '../../../policy/node-usage.ts';
import { complete, exceeding, formatResources, sum } from '../../../policy/resources.ts';
import { recordEvent } from '../../../store/audit.ts';
import type { Db } from '../../../store/db.ts';
import { pendingModels } from '../../../store/decisions.ts';
import { lastHeartbeats } from '../../../store/node-liveness.ts';
import { deleteNode, listNodes, putNode, setNodeState } from '../../../store/nodes.ts';
import { listReplicas } from '../../../store/replicas.ts';
import type { ApiDeps } from '../../deps.ts';
import { recordedChange } from '../../recorded.ts';
import type {
  deleteNodeRoute,
  listNodesRoute,
  nodeStateRoute,
  putNodeRoute,
  STATE_CHANGES,
} from './routes.ts';

/** What each route of nodes does, over the store and reconcilers of `deps`. */
export function nodeHandlers(deps: ApiDeps) {
  const { sql } = deps;

  /** New room may let pending models place: tell those whose newest decision was pending. */
  const pending = { models: () => pendingModels(sql), why: 'replicaChanged' as const };

  const put: RouteHandler<typeof putNodeRoute> = async (c) => {
    const { name } = c.req.valid('param');
    const input = c.req.valid('json');
    const who = identityOf(c);
    if (who.role === 'agent' && input.driver !== 'agent')
      throw new ApiError(400, 'an agent registers its node with driver "agent"');
    // Only an agent's identity carries a node grant (permissions.ts refuses an agent's without one).
    const address = who.nodeGrant
      ? await boundedRegistration(deps, who.name, who.nodeGrant, name, input)
      : undefined;
    const held = sum((await listReplicas(sql, { node: name, activeOnly: true })).map((r) => r.resources));
    // An absent dimension is no capacity at all (placement reads it as 0), so it is compared as 0.
    const short = exceeding(held, complete(input.capacity));
    if (short) {
      throw new Conflict(
        `node ${name}'s replicas hold ${formatResources({ [short]: held[short] })}, more than the capacity given`,
      );
    }
    const created = await recordedChange(c, deps, {
      action: 'node.put',
      ...nodeChange(name),
      apply: (tx) =>
        putNode(tx, {
          name,
          capacity: input.capacity,
          gpu_model: input.gpu_model ?? null,
          labels: input.labels ?? {},
          driver: input.driver,
          ...(address && { address }),
        }),
      tell: pending,
    });
    return c.json({ name, ...(address && { address }) }, created ? 201 : 200);
  };

  const list: RouteHandler<typeof listNodesRoute> = async (c) => {
    const [nodes, replicas, heartbeats] = await Promise.all([
      listNodes(sql),
      listReplicas(sql, { activeOnly: true }),
      lastHeartbeats(sql),
    ]);
    const body = nodes.map((node) => {
      const here = replicas.filter((r) => r.node === node.name);
      return {
        ...node,
        driver: node.driver ?? 'sim',
        heartbeat_at: heartbeats.get(node.name) ?? null,
        ...nodeUsage(node, here),
        replicas: here.length,
      };
    });
    return c.json(body, 200);
  };

  const setState =
    ({ verb, state }: (typeof STATE_CHANGES)[number]): RouteHandler<ReturnType<typeof nodeStateRoute>> =>
    async (c) => {
      const { name } = c.req.valid('param');
      await recordedChange(c, deps, {
        action: `node.${verb}`,
        ...nodeChange(name),
        apply: async (tx) => {
          if (!(await setNodeState(tx, name, state))) throw new NotFound(`there is no node "${name}"`);
        },
        tell: state === 'ready' ? pending : undefined,
      });
      return c.json({ name, state }, 200);
    };

  const remove: RouteHandler<typeof deleteNodeRoute> = async (c) => {
    const { name } = c.req.valid('param');
    await recordedChange(c, deps, {
      action: 'node.delete',
      ...nodeChange(name),
      apply: async (tx) => {
        const outcome = await deleteNode(tx, name);
        if (outcome === 'missing') throw new NotFound(`there is no node "${name}"`);
        if (outcome === 'in-use')
          throw new Conflict(`replicas still run on node ${name}; cordon it and wait for them to stop`);
      },
    });
    return c.json({ removed: name }, 200);
  };

  return { put, list, setState, remove };
}

/**
 * An agent registers its node within its token's bounds, at its token's address (which it answers):
 * a registration beyond them is refused, and recorded in the audit log since it changed nothing.
 */
async function boundedRegistration(
  deps: ApiDeps,
  token: string,
  grant: NodeGrant,
  name: string,
  declared: NodeDeclaration,
): Promise<string> {
  const breach = beyondBounds(declared, grant.bounds);
  if (!breach) return grant.address;
  const why = breachSentence(name, breach);
  await recordEvent(
    deps.sql,
    { actor: token, action: 'node.register-refused', target: `node:${name}` },
    { declared: declared as never, reason: why },
  );
  throw new ApiError(403, why);
}

/** A node as the audit log names and keeps it, before and after a change. */
const nodeChange = (name: string) => ({
  target: `node:${name}`,
  read: async (tx: Db) => (await listNodes(tx)).find((n) => n.name === name) ?? null,
});
