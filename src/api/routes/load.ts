import { createRoute, z } from '@hono/zod-openapi';
import { NotFound } from '../../domain/errors.ts';
import { loadOf } from '../../policy/load.ts';
import { type LoadZone, loadZone } from '../../policy/load-zone.ts';
import { modelFigures } from '../../policy/model-figures.ts';
import { buildView } from '../../policy/view.ts';
import { putLoadReport, readLoad } from '../../store/load.ts';
import { listMeasurements } from '../../store/measurements.ts';
import { getModel } from '../../store/models.ts';
import { listReplicas } from '../../store/replicas.ts';
import type { ApiDeps } from '../deps.ts';
import { jsonBody } from '../http.ts';
import { ObjectNameSchema } from '../names.ts';
import { errors, jsonContent, jsonRequest, newRouter } from '../openapi.ts';

/** At most this many signals a second per model from one API process ("a few times a second"). */
const MIN_SIGNAL_GAP_MS = 250;

const LoadReportSchema = z
  .strictObject({
    in_flight: z.number().int().min(0).max(10_000_000),
    waiting: z.number().int().min(0).max(10_000_000).default(0),
    source: z
      .string()
      .regex(/^[\w.:-]{1,100}$/, { error: 'must be 1 to 100 letters, digits, ".", ":", "_" or "-"' })
      .default('default'),
  })
  .openapi('LoadReport');

/**
 * Gateways report requests in flight. The report is stored; the reconciler is signalled only when the
 * load crosses a threshold (policy/load-zone.ts) or capacity changed while it is out of the steady zone,
 * so a busy gateway does not flood the workflow's history.
 */
export function loadRouter(deps: ApiDeps) {
  const app = newRouter();
  const { sql } = deps;
  const now = deps.now ?? Date.now;
  const lastSignal = new Map<string, { zone: LoadZone; capacity: number; at: number }>();

  app.openapi(
    createRoute({
      middleware: [jsonBody(4 * 1024)] as const,
      method: 'post',
      path: '/models/{name}/load',
      tags: ['models'],
      summary: 'Report requests in flight for a model (the latest report of each source counts)',
      request: { params: z.object({ name: ObjectNameSchema }), body: jsonRequest(LoadReportSchema) },
      responses: {
        202: jsonContent(
          z.object({
            model: z.string(),
            in_flight: z.number(),
            capacity_at_slo: z.number(),
            zone: z.string(),
            signalled: z.boolean(),
          }),
          'accepted',
        ),
        ...errors(400, 404, 413, 503),
      },
    }),
    async (c) => {
      const { name } = c.req.valid('param');
      const report = c.req.valid('json');
      const model = await getModel(sql, name);
      if (!model) throw new NotFound(`there is no model "${name}"`);
      await putLoadReport(sql, name, report.source, report.in_flight, report.waiting);

      const at = now();
      const [replicas, measurements, load] = await Promise.all([
        listReplicas(sql, { model: name, activeOnly: true }),
        listMeasurements(sql, name),
        readLoad(sql, at, deps.policy.loadStaleMs, name),
      ]);
      const view = buildView({
        now: at,
        settings: deps.policy,
        scopes: [],
        quotas: [],
        models: [model],
        nodes: [],
        replicas,
        measurements,
        load,
      });
      const figures = modelFigures(view, model);
      const inFlight = loadOf(view, name).inFlight ?? 0;
      const zone = loadZone(inFlight, figures.serving.map(figures.concurrency));

      const last = lastSignal.get(name);
      const changed =
        !last || last.zone !== zone || (zone !== 'within' && last.capacity !== figures.capacity);
      const signalled = changed && (!last || at - last.at >= MIN_SIGNAL_GAP_MS);
      if (signalled) {
        lastSignal.set(name, { zone, capacity: figures.capacity, at });
        await deps.reconcilers.tell([name], 'loadChanged');
      }
      return c.json(
        { model: name, in_flight: inFlight, capacity_at_slo: figures.capacity, zone, signalled },
        202,
      );
    },
  );
  return app;
}
