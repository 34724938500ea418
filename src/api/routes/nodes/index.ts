import type { ApiDeps } from '../../deps.ts';
import { newRouter } from '../../openapi.ts';
import { agentHandlers } from './agent-handlers.ts';
import { heartbeatRoute, replicaLoadRoute, replicaReportRoute } from './agent-routes.ts';
import { nodeHandlers } from './handlers.ts';
import { deleteNodeRoute, listNodesRoute, nodeStateRoute, putNodeRoute, STATE_CHANGES } from './routes.ts';

/**
 * Nodes: added, listed with what they hold, cordoned and removed (routes.ts), and what their agents
 * report (agent-routes.ts).
 */
export function nodesRouter(deps: ApiDeps) {
  const handle = nodeHandlers(deps);
  const app = newRouter().openapi(putNodeRoute, handle.put).openapi(listNodesRoute, handle.list);
  for (const change of STATE_CHANGES) app.openapi(nodeStateRoute(change), handle.setState(change));
  const agent = agentHandlers(deps);
  return app
    .openapi(deleteNodeRoute, handle.remove)
    .openapi(heartbeatRoute, agent.beat)
    .openapi(replicaReportRoute, agent.report)
    .openapi(replicaLoadRoute, agent.load);
}
