import { createRoute, z } from '@hono/zod-openapi';
import { permits, visibility } from '../../auth/guard.ts';
import { FiguresSchema } from '../../contracts/schemas/figures.ts';
import { ResourcesSchema } from '../../contracts/schemas/resources.ts';
import type { Resources } from '../../domain/resources.ts';
import type { ScopeKey } from '../../domain/scope.ts';
import { scopeSegments } from '../../domain/scope-names.ts';
import { complete } from '../../policy/resources.ts';
import { scopeFigures } from '../../policy/scope-figures.ts';
import { readSnapshot } from '../../store/snapshot.ts';
import type { ApiDeps } from '../deps.ts';
import { errors, jsonContent, newRouter } from '../openapi.ts';

interface TreeNode {
  scope: ScopeKey;
  kind: string;
  id: string;
  name: string;
  path: string;
  quota: { guarantee?: object; limit?: object; priority: number } | null;
  holds: Required<Resources>;
  borrowed: Required<Resources>;
  children: TreeNode[];
}

const TreeNodeSchema: z.ZodType<TreeNode> = z
  .lazy(() =>
    z.object({
      scope: z.string() as z.ZodType<ScopeKey>,
      kind: z.string(),
      id: z.string(),
      name: z.string(),
      path: z.string(),
      quota: z
        .object({
          guarantee: ResourcesSchema.optional(),
          limit: ResourcesSchema.optional(),
          priority: z.number().int().openapi({ description: "the scope's priority among its siblings" }),
        })
        .nullable(),
      holds: FiguresSchema,
      borrowed: FiguresSchema,
      children: z.array(TreeNodeSchema),
    }),
  )
  .openapi('TreeNode');

export function treeRouter(deps: ApiDeps) {
  const app = newRouter();
  const now = deps.now ?? Date.now;

  app.openapi(
    createRoute({
      middleware: [permits('read')] as const,
      method: 'get',
      path: '/tree',
      tags: ['tenancy'],
      summary: 'The tenancy tree, each scope with its quota, holds and borrowed',
      responses: { 200: jsonContent(z.array(TreeNodeSchema)), ...errors(503) },
    }),
    async (c) => {
      const [snapshot, shown] = await Promise.all([
        readSnapshot(deps.sql, now(), deps.policy),
        visibility(c),
      ]);
      const perScope = scopeFigures(snapshot);
      const scopes = new Map(snapshot.scopes.map((scope) => [scope.key, scope]));
      const quotas = new Map(snapshot.quotas.map((quota) => [quota.scope, quota]));
      const nodes = new Map<ScopeKey, TreeNode>();
      const roots: TreeNode[] = [];
      // Parents come before children (listScopes), so each parent's node exists when its child arrives.
      // A scope the caller sees under one it does not (a viewer of a team) is a root of its tree.
      for (const scope of snapshot.scopes.filter((s) => shown(s.key))) {
        const quota = quotas.get(scope.key);
        const node: TreeNode = {
          scope: scope.key,
          kind: scope.kind,
          id: scope.id,
          name: scope.name,
          path: scopeSegments(scopes, scope.key).join('/'),
          quota: quota
            ? { guarantee: quota.guarantee, limit: quota.limit, priority: quota.priority ?? 0 }
            : null,
          holds: complete(perScope.get(scope.key)?.holds ?? {}),
          borrowed: complete(perScope.get(scope.key)?.borrowed ?? {}),
          children: [],
        };
        nodes.set(scope.key, node);
        const parent = scope.parent ? nodes.get(scope.parent) : undefined;
        (parent?.children ?? roots).push(node);
      }
      return c.json(roots, 200);
    },
  );
  return app;
}
