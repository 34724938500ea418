import { createRoute, type RouteHandler, z } from '@hono/zod-openapi';
import { identityOf, permits } from '../../auth/guard.ts';
import { type Identity, may } from '../../contracts/permissions.ts';
import { WarningsSchema } from '../../contracts/schemas/models.ts';
import { NameParam } from '../../contracts/schemas/names.ts';
import { HIDDEN, RuntimeInputSchema, RuntimeViewSchema } from '../../contracts/schemas/runtime.ts';
import { Conflict, NotFound } from '../../domain/errors.ts';
import type { Runtime } from '../../domain/runtime.ts';
import { checkParams } from '../../domain/runtime-params.ts';
import type { Db } from '../../store/db.ts';
import { listModels } from '../../store/models.ts';
import { deleteRuntime, getRuntime, listRuntimes, modelsNaming, putRuntime } from '../../store/runtimes.ts';
import type { ApiDeps } from '../deps.ts';
import { jsonBody } from '../http.ts';
import { errors, jsonContent, jsonRequest, newRouter } from '../openapi.ts';
import { recordedChange } from '../recorded.ts';

// Runtimes (issue 30): defined by admins, read by whoever reads the nodes. A profile names one and gives
// its parameters (routes/models); the agent fills the runtime's templates with them on its node.

const BODY_LIMIT = 64 * 1024;

export const putRuntimeRoute = createRoute({
  middleware: [permits('change-runtime'), jsonBody(BODY_LIMIT)] as const,
  method: 'put',
  path: '/runtimes/{name}',
  tags: ['cluster'],
  summary: 'Define or replace a runtime: what engines run and what an operator may set (admins only)',
  request: { params: NameParam, body: jsonRequest(RuntimeInputSchema) },
  responses: {
    200: jsonContent(z.object({ name: z.string(), warnings: WarningsSchema }), 'updated'),
    201: jsonContent(z.object({ name: z.string(), warnings: WarningsSchema }), 'created'),
    ...errors(400, 413, 503),
  },
});

export const listRuntimesRoute = createRoute({
  middleware: [permits('read-cluster')] as const,
  method: 'get',
  path: '/runtimes',
  tags: ['cluster'],
  summary: "List runtimes (variables' values shown to admins only)",
  responses: { 200: jsonContent(z.array(RuntimeViewSchema)), ...errors(503) },
});

export const getRuntimeRoute = createRoute({
  middleware: [permits('read-cluster')] as const,
  method: 'get',
  path: '/runtimes/{name}',
  tags: ['cluster'],
  summary: "One runtime (variables' values shown to admins only)",
  request: { params: NameParam },
  responses: { 200: jsonContent(RuntimeViewSchema), ...errors(404, 503) },
});

export const deleteRuntimeRoute = createRoute({
  middleware: [permits('change-runtime')] as const,
  method: 'delete',
  path: '/runtimes/{name}',
  tags: ['cluster'],
  summary: 'Remove a runtime no profile names (admins only)',
  request: { params: NameParam },
  responses: { 200: jsonContent(z.object({ removed: z.string() })), ...errors(404, 409, 503) },
});

/** The answer (404) for a runtime that does not exist. */
const noSuchRuntime = (name: string) => new NotFound(`there is no runtime "${name}"`);

/** A runtime as `who` may read it: the values of its fixed variables are for those who define runtimes. */
function runtimeShown(runtime: Runtime, who: Identity): Runtime {
  if (may(who, 'change-runtime').allowed || !runtime.env) return runtime;
  return { ...runtime, env: Object.fromEntries(Object.keys(runtime.env).map((name) => [name, HIDDEN])) };
}

/** Sentences about models whose parameters the new runtime refuses: their next start would fail. */
async function paramsNoLongerValid(sql: Db, name: string, runtime: Runtime): Promise<string[]> {
  return (await listModels(sql)).flatMap((model) =>
    model.profiles
      .filter((profile) => profile.runtime === name)
      .flatMap((profile) => {
        const checked = checkParams(name, runtime, profile.params);
        return checked.ok
          ? []
          : [`model ${model.name}, profile ${profile.name}: ${checked.why}; its next start will fail`];
      }),
  );
}

export function runtimesRouter(deps: ApiDeps) {
  const { sql } = deps;
  const change = (name: string) => ({
    target: `runtime:${name}`,
    read: (tx: Db) => getRuntime(tx, name).then((found) => found ?? null),
  });

  const put: RouteHandler<typeof putRuntimeRoute> = async (c) => {
    const { name } = c.req.valid('param');
    const spec = c.req.valid('json');
    const created = await recordedChange(c, deps, {
      action: 'runtime.put',
      ...change(name),
      apply: (tx) => putRuntime(tx, name, spec, identityOf(c).name),
    });
    const stored = await getRuntime(sql, name);
    const warnings = stored ? await paramsNoLongerValid(sql, name, stored) : [];
    return c.json({ name, ...(warnings.length > 0 ? { warnings } : {}) }, created ? 201 : 200);
  };

  const list: RouteHandler<typeof listRuntimesRoute> = async (c) => {
    const who = identityOf(c);
    return c.json(
      (await listRuntimes(sql)).map((runtime) => runtimeShown(runtime, who)),
      200,
    );
  };

  const get: RouteHandler<typeof getRuntimeRoute> = async (c) => {
    const { name } = c.req.valid('param');
    const found = await getRuntime(sql, name);
    if (!found) throw noSuchRuntime(name);
    return c.json(runtimeShown(found, identityOf(c)), 200);
  };

  const remove: RouteHandler<typeof deleteRuntimeRoute> = async (c) => {
    const { name } = c.req.valid('param');
    await recordedChange(c, deps, {
      action: 'runtime.delete',
      ...change(name),
      apply: async (tx) => {
        const outcome = await deleteRuntime(tx, name);
        if (outcome === 'missing') throw noSuchRuntime(name);
        // Only an admin deletes: the models may be named.
        if (outcome === 'in-use')
          throw new Conflict(
            `models ${(await modelsNaming(tx, name)).join(', ')} name runtime ${name}; give their profiles another runtime first`,
          );
      },
    });
    return c.json({ removed: name }, 200);
  };

  return newRouter()
    .openapi(putRuntimeRoute, put)
    .openapi(listRuntimesRoute, list)
    .openapi(getRuntimeRoute, get)
    .openapi(deleteRuntimeRoute, remove);
}
