import type { ApiDeps } from '../../deps.ts';
import { newRouter } from '../../openapi.ts';
import { quotaHandlers } from './handlers.ts';
import {
  getQuotaRoute,
  listQuotasRoute,
  previewQuotaRoute,
  removeQuotaRoute,
  setQuotaRoute,
} from './routes.ts';

/** Quotas: read with what their scopes hold, set, previewed and removed; routes.ts describes them. */
export function quotasRouter(deps: ApiDeps) {
  const handle = quotaHandlers(deps);
  return newRouter()
    .openapi(listQuotasRoute, handle.list)
    .openapi(getQuotaRoute, handle.get)
    .openapi(setQuotaRoute, handle.set)
    .openapi(previewQuotaRoute, handle.preview)
    .openapi(removeQuotaRoute, handle.remove);
}
