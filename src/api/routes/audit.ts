import { createRoute, z } from '@hono/zod-openapi';
import { permits } from '../../auth/guard.ts';
import { listAudit } from '../../store/audit.ts';
import type { ApiDeps } from '../deps.ts';
import { errors, jsonContent, newRouter } from '../openapi.ts';

const AuditEntrySchema = z
  .object({
    id: z.number(),
    at: z.string(),
    actor: z.string().openapi({ description: 'the name of the token that made the change' }),
    action: z.string().openapi({ example: 'quota.set' }),
    target: z.string().openapi({ example: 'team:k3n8c2p4xa' }),
    before: z.unknown().openapi({ description: 'the thing before the change; null when it was absent' }),
    after: z.unknown().openapi({ description: 'the thing after the change; null when it is gone' }),
  })
  .openapi('AuditEntry');

/** Every change made through the API, newest first (admins only). */
export function auditRouter(deps: ApiDeps) {
  const app = newRouter();
  app.openapi(
    createRoute({
      middleware: [permits('read-audit')] as const,
      method: 'get',
      path: '/audit',
      tags: ['audit'],
      summary: 'The audit log: who changed what, when, before and after; newest first',
      request: {
        query: z.strictObject({ limit: z.coerce.number().int().min(1).max(1000).default(100) }),
      },
      responses: { 200: jsonContent(z.array(AuditEntrySchema)), ...errors(400, 503) },
    }),
    async (c) => c.json(await listAudit(deps.sql, c.req.valid('query').limit), 200),
  );
  return app;
}
