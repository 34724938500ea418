import type { ApiDeps } from '../../deps.ts';
import { newRouter } from '../../openapi.ts';
import { modelHandlers } from './handlers.ts';
import { deleteModelRoute, getModelRoute, listModelsRoute, putModelRoute, setOwnerRoute } from './routes.ts';

/** Models: their spec, how they read, and who owns them; routes.ts describes them, handlers.ts does them. */
export function modelsRouter(deps: ApiDeps) {
  const handle = modelHandlers(deps);
  return newRouter()
    .openapi(putModelRoute, handle.put)
    .openapi(deleteModelRoute, handle.remove)
    .openapi(listModelsRoute, handle.list)
    .openapi(getModelRoute, handle.get)
    .openapi(setOwnerRoute, handle.owner);
}
