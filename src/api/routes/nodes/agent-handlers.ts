import type { RouteHandler } from '@hono/zod-openapi';
import { NotFound } from '../../../domain/errors.ts';
import { LoadSignals } from '../../../reconcilers/load-signals.ts';
import { pendingModels } from '../../../store/decisions.ts';
import { getModel } from '../../../store/models.ts';
import { heartbeat } from '../../../store/node-liveness.ts';
import { applyReplicaReport } from '../../../store/replica-reports.ts';
import { getReplica, modelsWaitingOn } from '../../../store/replicas.ts';
import type { ApiDeps } from '../../deps.ts';
import type { heartbeatRoute, replicaLoadRoute, replicaReportRoute } from './agent-routes.ts';

/** What an agent's calls do: its node lives, its replicas move along, their engines' load counts. */
export function agentHandlers(deps: ApiDeps) {
  const { sql, reconcilers } = deps;
  const loadSignals = new LoadSignals(sql, reconcilers, deps.policy, deps.now);
  const beat: RouteHandler<typeof heartbeatRoute> = async (c) => {
    const { name } = c.req.valid('param');
    const answer = await heartbeat(sql, name);
    if (!answer) throw new NotFound(`there is no agent's node "${name}"`);
    // A node back from lost is room again for any model waiting for room.
    if (answer.back) await reconcilers.tell(await pendingModels(sql), 'replicaChanged');
    const temporal = deps.nodeCredential?.(name);
    return c.json({ name, state: answer.state, back: answer.back, wanted: answer.wanted, temporal }, 200);
  };

  const report: RouteHandler<typeof replicaReportRoute> = async (c) => {
    const { name, id } = c.req.valid('param');
    const moved = await applyReplicaReport(sql, name, id, c.req.valid('json'));
    if (!moved) throw new NotFound(`node ${name} holds no replica "${id}"`);
    if (moved.moved) {
      const freed = moved.state === 'failed' || moved.state === 'crashed' || moved.state === 'stopped';
      await reconcilers.tell(
        [moved.model, ...(freed ? await modelsWaitingOn(sql, name) : [])],
        'replicaChanged',
      );
    }
    return c.json({ id, state: moved.state, moved: moved.moved }, 200);
  };

  const load: RouteHandler<typeof replicaLoadRoute> = async (c) => {
    const { name, id } = c.req.valid('param');
    const { in_flight, waiting, waiting_since } = c.req.valid('json');
    const replica = await getReplica(sql, id);
    const model = replica?.node === name ? await getModel(sql, replica.model) : undefined;
    if (!model) throw new NotFound(`node ${name} holds no replica "${id}"`);
    const receipt = await loadSignals.report(model, `replica:${id}`, in_flight, waiting, waiting_since);
    return c.json(receipt, 202);
  };

  return { beat, report, load };
}
