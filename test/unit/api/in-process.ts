// Routers answered in-process with app.request(), as Hono's own apps are tested: no Postgres, no
// Temporal. What these tests cover is answered before the store is asked, and the dependencies prove it.
import { OpenAPIHono } from '@hono/zod-openapi';
import { answerErrors } from '../../../src/api/answer-errors.ts';
import type { ApiDeps } from '../../../src/api/deps.ts';
import { validationHook } from '../../../src/api/http.ts';
import { scopeTree } from '../../../src/auth/guard.ts';
import { serverApp } from '../../../src/cli/serve.ts';
import type { Identity } from '../../../src/contracts/permissions.ts';
import type { Scope } from '../../../src/domain/scope.ts';
import { DEFAULT_POLICY_SETTINGS } from '../../../src/domain/snapshot.ts';
import type { Sql } from '../../../src/store/db.ts';
import type { Answer } from '../../support/stack.ts';

const reached = (what: string) => () => {
  throw new Error(`${what} was reached`);
};

/** Dependencies a request must not reach: one that does fails with a 500 (and its error in the log). */
export const unreached: ApiDeps = {
  sql: reached('the store') as unknown as Sql,
  reconcilers: { tell: reached('tell'), ensure: reached('ensure'), missing: reached('missing') },
  temporalReachable: reached('Temporal'),
  policy: DEFAULT_POLICY_SETTINGS,
};

const quiet = { warn: () => {}, error: () => {} };

/** The whole app (the API and its console) over `unreached`: what it answers before anyone is authenticated. */
export const wholeApp = () => serverApp(unreached, quiet);

export const admin: Identity = { name: 'admin', role: 'admin', scope: null, models: null };

/**
 * One router mounted as app.ts mounts it, with the app's error answers, for a caller already
 * authenticated as `who` in a tenancy tree of `scopes`.
 */
export function routerAs(router: (deps: ApiDeps) => OpenAPIHono, who: Identity, scopes: Scope[] = []) {
  const app = new OpenAPIHono({ defaultHook: validationHook });
  app.use('*', async (c, next) => {
    c.set('identity', who);
    c.set('scopeTree', async () => scopeTree(scopes));
    await next();
  });
  app.route('/api/v1', router(unreached));
  answerErrors(app, quiet);
  return app;
}

/** A request with a JSON body (a string is sent as it is), answered as `{status, body}`. */
export async function send(
  app: { request: OpenAPIHono['request'] },
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await app.request(path, {
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}
