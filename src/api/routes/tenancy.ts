import { createRoute, z } from '@hono/zod-openapi';
import { authorize, nameable, permits, visibility } from '../../auth/guard.ts';
import { ApiError } from '../../contracts/errors.ts';
import { ScopeNameSchema, ScopeRefSchema } from '../../contracts/schemas/names.ts';
import { parseScopeKey, type ScopeKey, type ScopeKind, scopeKey } from '../../domain/scope.ts';
import { scopeSegments } from '../../domain/scope-names.ts';
import { newId } from '../../store/ids.ts';
import { createScope, deleteScope, getScope, listScopes, noSuchScope } from '../../store/tenancy.ts';
import type { ApiDeps } from '../deps.ts';
import { jsonBody } from '../http.ts';
import { errors, jsonContent, jsonRequest, newRouter } from '../openapi.ts';
import { recordedChange } from '../recorded.ts';
import { refuseBeyondScopeCap } from '../scope-caps.ts';
import { resolveOrRefuse } from '../scopes.ts';

const BODY_LIMIT = 4 * 1024;

const OrgSchema = z.object({ id: z.string(), name: z.string() }).openapi('Org');
const TeamSchema = z
  .object({ id: z.string(), org_id: z.string(), name: z.string(), path: z.string() })
  .openapi('Team');
const ProjectSchema = z
  .object({ id: z.string(), team_id: z.string(), name: z.string(), path: z.string() })
  .openapi('Project');

const KINDS = [
  { kind: 'org', plural: 'orgs', parentField: null, schema: OrgSchema },
  { kind: 'team', plural: 'teams', parentField: 'org', schema: TeamSchema },
  { kind: 'project', plural: 'projects', parentField: 'team', schema: ProjectSchema },
] as const;

const PARENT_KIND: Record<ScopeKind, ScopeKind | null> = { org: null, team: 'org', project: 'team' };

/** Orgs, teams and projects: create, list, delete. One shape for the three levels of the tree. */
export function tenancyRouter(deps: ApiDeps) {
  const app = newRouter();
  const { sql } = deps;

  /** The scopes of a kind as the API shows them, those `shown` lets through. */
  const present = async (kind: ScopeKind, shown: (key: ScopeKey) => boolean = () => true) => {
    const scopes = await listScopes(sql);
    const byKey = new Map(scopes.map((scope) => [scope.key, scope]));
    return scopes
      .filter((scope) => scope.kind === kind && shown(scope.key))
      .map((scope) => {
        const parentId = scope.parent ? parseScopeKey(scope.parent)?.id : undefined;
        if (kind === 'org') return { id: scope.id, name: scope.name };
        const path = scopeSegments(byKey, scope.key).join('/');
        return kind === 'team'
          ? { id: scope.id, org_id: parentId, name: scope.name, path }
          : { id: scope.id, team_id: parentId, name: scope.name, path };
      });
  };

  for (const { kind, plural, parentField, schema } of KINDS) {
    const body = parentField
      ? z.strictObject({ [parentField]: ScopeRefSchema, name: ScopeNameSchema })
      : z.strictObject({ name: ScopeNameSchema });

    app.openapi(
      createRoute({
        middleware: [permits('create-scope'), jsonBody(BODY_LIMIT)] as const,
        method: 'post',
        path: `/${plural}`,
        tags: ['tenancy'],
        summary: `Create ${kind === 'org' ? 'an org' : `a ${kind}`}`,
        request: { body: jsonRequest(body) },
        responses: { 201: jsonContent(schema, 'created'), ...errors(400, 409, 413, 503) },
      }),
      async (c) => {
        const input = c.req.valid('json') as { name: string } & Record<string, string>;
        const parentKind = PARENT_KIND[kind];
        const parent =
          parentKind && parentField ? await resolveOrRefuse(c, input[parentField], parentKind) : null;
        if (parent && parent.kind !== parentKind) {
          throw new ApiError(
            400,
            `a ${kind} belongs to ${parentKind === 'org' ? 'an org' : 'a team'}, not to ${parent.key}`,
          );
        }
        await authorize(c, 'create-scope', { scope: parent?.key ?? null });
        const id = newId();
        const key = scopeKey(kind, id);
        await recordedChange(c, deps, {
          action: `${kind}.create`,
          target: key,
          read: (tx) => getScope(tx, key),
          apply: async (tx) => {
            await refuseBeyondScopeCap(c, tx, 'scopes', deps.scopeCaps);
            await createScope(tx, kind, id, input.name, parent?.id ?? null);
          },
        });
        const created = (await present(kind)).find((scope) => scope.id === id);
        return c.json(created as never, 201);
      },
    );

    app.openapi(
      createRoute({
        middleware: [permits('read')] as const,
        method: 'get',
        path: `/${plural}`,
        tags: ['tenancy'],
        summary: `List ${plural}`,
        responses: { 200: jsonContent(z.array(schema)), ...errors(503) },
      }),
      async (c) => c.json((await present(kind, await visibility(c))) as never, 200),
    );

    app.openapi(
      createRoute({
        middleware: [permits('delete-scope')] as const,
        method: 'delete',
        path: `/${plural}/{id}`,
        tags: ['tenancy'],
        summary: `Delete ${kind === 'org' ? 'an org' : `a ${kind}`} that has no children, models or quota`,
        request: { params: z.object({ id: z.string() }) },
        responses: { 200: jsonContent(z.object({ removed: z.string() })), ...errors(404, 409, 503) },
      }),
      async (c) => {
        const { id } = c.req.valid('param');
        const key = scopeKey(kind, id);
        // A scope outside the caller's view is answered as one that does not exist, not refused.
        if (!(await nameable(c))(key)) throw noSuchScope(kind, id);
        await authorize(c, 'delete-scope', { scope: key });
        await recordedChange(c, deps, {
          action: `${kind}.delete`,
          target: key,
          read: (tx) => getScope(tx, key),
          apply: (tx) => deleteScope(tx, kind, id),
        });
        return c.json({ removed: key }, 200);
      },
    );
  }
  return app;
}
