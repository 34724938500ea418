import { createRoute, z } from '@hono/zod-openapi';
import { authorize, permits } from '../../auth/guard.ts';
import { LOAD_COUNTS, LoadReceiptSchema, sinceOnlyWhenWaiting } from '../../contracts/schemas/load.ts';
import { ObjectNameSchema } from '../../contracts/schemas/names.ts';
import { LoadSignals } from '../../reconcilers/load-signals.ts';
import type { ApiDeps } from '../deps.ts';
import { jsonBody } from '../http.ts';
import { existingModelInView } from '../model-in-view.ts';
import { errors, jsonContent, jsonRequest, newRouter } from '../openapi.ts';

const LoadReportSchema = z
  .strictObject({
    ...LOAD_COUNTS,
    source: z
      .string()
      .regex(/^[A-Za-z0-9][\w.:-]{0,99}$/, {
        error: 'must be 1 to 100 letters, digits, ".", ":", "_" or "-", starting with a letter or digit',
      })
      .default('default'),
  })
  .superRefine(sinceOnlyWhenWaiting)
  .openapi('LoadReport');

/** Gateways report requests in flight; LoadSignals stores the report and wakes the reconciler when it matters. */
export function loadRouter(deps: ApiDeps) {
  const app = newRouter();
  const { sql } = deps;
  const loadSignals = new LoadSignals(sql, deps.reconcilers, deps.policy, deps.now);

  app.openapi(
    createRoute({
      middleware: [permits('report-load'), jsonBody(4 * 1024)] as const,
      method: 'post',
      path: '/models/{name}/load',
      tags: ['models'],
      summary: 'Report requests in flight for a model (the latest report of each source counts)',
      request: { params: z.object({ name: ObjectNameSchema }), body: jsonRequest(LoadReportSchema) },
      responses: {
        202: jsonContent(LoadReceiptSchema, 'accepted'),
        ...errors(400, 404, 413, 429, 503),
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const report = c.req.valid('json');
      const model = await existingModelInView(c, sql, name, 'report-load');
      await authorize(c, 'report-load', { scope: model.owner, model: name });
      const receipt = await loadSignals.report(
        model,
        report.source,
        report.in_flight,
        report.waiting,
        report.waiting_since,
      );
      return c.json(receipt, 202);
    },
  );
  return app;
}
