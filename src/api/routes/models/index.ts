import type { ApiDeps } from '../../deps.ts';
import { newRouter } from '../../openapi.ts';
import { modelOwnerRouter } from './owner.ts';
import { modelReadRouter } from './read.ts';
import { modelSpecRouter } from './spec.ts';

/** Models: their spec, how they read, and who owns them (one router per job). */
export function modelsRouter(deps: ApiDeps) {
  const app = newRouter();
  for (const router of [modelSpecRouter, modelReadRouter, modelOwnerRouter]) app.route('/', router(deps));
  return app;
}
