import { createRoute, z } from '@hono/zod-openapi';
import { NotFound } from '../../domain/errors.ts';
import { listMeasurements, putMeasurement } from '../../store/measurements.ts';
import { getModel } from '../../store/models.ts';
import type { ApiDeps } from '../deps.ts';
import { ApiError, jsonBody } from '../http.ts';
import { ObjectNameSchema } from '../names.ts';
import { errors, jsonContent, jsonRequest, newRouter } from '../openapi.ts';

const BODY_LIMIT = 256 * 1024;
const ms = z.number().finite().min(0);

const MeasurementSchema = z
  .strictObject({
    model: ObjectNameSchema,
    profile: ObjectNameSchema,
    max_concurrency_at_slo: z.number().finite().min(0).max(1_000_000),
    throughput_tok_per_sec: z.number().finite().min(0),
    slo: z.strictObject({ ttft_p95_ms: ms.optional(), tpot_p95_ms: ms.optional() }),
    points: z
      .array(
        z.strictObject({
          concurrency: z.number().finite().min(0),
          ttft_p95_ms: ms,
          tpot_p95_ms: ms,
          tok_per_sec: z.number().finite().min(0),
        }),
      )
      .max(1000)
      .optional(),
    tool: z.string().max(100).optional(),
    measured_at: z.iso.datetime({ offset: true, error: 'must be an RFC 3339 timestamp' }).optional(),
  })
  .openapi('Measurement');

/** What `llmgw ctl bench` stores: how many requests in flight one replica serves within its SLO. */
export function measurementsRouter(deps: ApiDeps) {
  const app = newRouter();
  const { sql } = deps;

  app.openapi(
    createRoute({
      middleware: [jsonBody(BODY_LIMIT)] as const,
      method: 'put',
      path: '/measurements',
      tags: ['measurements'],
      summary: "Replace a model/profile's measurement and tell the model's reconciler",
      request: { body: jsonRequest(MeasurementSchema) },
      responses: {
        200: jsonContent(z.object({ model: z.string(), profile: z.string() })),
        ...errors(400, 404, 413, 503),
      },
    }),
    async (c) => {
      const input = c.req.valid('json');
      const model = await getModel(sql, input.model);
      if (!model) throw new NotFound(`there is no model "${input.model}"`);
      if (!model.profiles.some((p) => p.name === input.profile)) {
        throw new ApiError(400, `model ${input.model} has no profile "${input.profile}"`);
      }
      const measuredAt = new Date(input.measured_at ?? (deps.now ?? Date.now)()).toISOString();
      await putMeasurement(sql, { ...input, measured_at: measuredAt });
      await deps.reconcilers.tell([input.model], 'measurementChanged');
      return c.json({ model: input.model, profile: input.profile }, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/measurements',
      tags: ['measurements'],
      summary: 'List measurements',
      request: { query: z.strictObject({ model: z.string().max(63).optional() }) },
      responses: {
        200: jsonContent(z.array(MeasurementSchema.extend({ measured_at: z.string() }))),
        ...errors(400, 503),
      },
    }),
    async (c) => c.json(await listMeasurements(sql, c.req.valid('query').model), 200),
  );
  return app;
}
