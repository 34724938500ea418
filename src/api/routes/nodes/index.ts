import type { ApiDeps } from '../../deps.ts';
import { newRouter } from '../../openapi.ts';
import { nodeHandlers } from './handlers.ts';
import { deleteNodeRoute, listNodesRoute, nodeStateRoute, putNodeRoute, STATE_CHANGES } from './routes.ts';

/** Nodes: added, listed with what they hold, cordoned and removed; routes.ts describes them. */
export function nodesRouter(deps: ApiDeps) {
  const handle = nodeHandlers(deps);
  const app = newRouter().openapi(putNodeRoute, handle.put).openapi(listNodesRoute, handle.list);
  for (const change of STATE_CHANGES) app.openapi(nodeStateRoute(change), handle.setState(change));
  return app.openapi(deleteNodeRoute, handle.remove);
}
