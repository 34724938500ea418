import type { ApiDeps } from '../../deps.ts';
import { newRouter } from '../../openapi.ts';
import { tokenHandlers } from './handlers.ts';
import { createTokenRoute, listTokensRoute, revokeTokenRoute } from './routes.ts';

/** Bearer tokens (admin only): made with their secret shown once, listed without it, revoked. */
export function tokensRouter(deps: ApiDeps) {
  const handle = tokenHandlers(deps);
  return newRouter()
    .openapi(createTokenRoute, handle.create)
    .openapi(listTokensRoute, handle.list)
    .openapi(revokeTokenRoute, handle.revoke);
}
