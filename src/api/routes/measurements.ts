import { createRoute, z } from '@hono/zod-openapi';
import { authorize, permits, visibility } from '../../auth/guard.ts';
import { ApiError } from '../../contracts/errors.ts';
import { ObjectNameSchema } from '../../contracts/schemas/names.ts';
import type { Db } from '../../store/db.ts';
import { listMeasurements, putMeasurement } from '../../store/measurements.ts';
import { listModels } from '../../store/models.ts';
import type { ApiDeps } from '../deps.ts';
import { jsonBody } from '../http.ts';
import { existingModelInView } from '../model-in-view.ts';
import { errors, jsonContent, jsonRequest, newRouter } from '../openapi.ts';
import { recordedChange } from '../recorded.ts';
import { tokensPerSec } from '../throughput.ts';
import { TimestampSchema } from '../timestamps.ts';

const BODY_LIMIT = 256 * 1024;
const ms = z.number().finite().min(0);

const MeasurementSchema = z
  .strictObject({
    model: ObjectNameSchema,
    profile: ObjectNameSchema,
    // 0 is no capacity at all: stored, such a profile would add none, and load would scale it out.
    max_concurrency_at_slo: z
      .number()
      .finite()
      .positive({
        error: 'must be above 0: 0 says no concurrency met the SLO, which is no measurement to store',
      })
      .max(1_000_000),
    throughput_tok_per_sec: tokensPerSec(),
    slo: z.strictObject({ ttft_p95_ms: ms.optional(), tpot_p95_ms: ms.optional() }),
    points: z
      .array(
        z.strictObject({
          concurrency: z.number().finite().min(0),
          ttft_p95_ms: ms,
          tpot_p95_ms: ms,
          tok_per_sec: tokensPerSec(),
        }),
      )
      .max(1000)
      .optional(),
    tool: z.string().max(100).optional(),
    measured_at: TimestampSchema.optional(),
  })
  .openapi('Measurement');

// Not MeasurementSchema.extend(): a strict schema extended is described as an allOf that no object
// satisfies (each part refuses the other's fields).
const StoredMeasurementSchema = z
  .object({
    ...MeasurementSchema.shape,
    max_concurrency_at_slo: z.number().min(0).openapi({
      description:
        'above 0; 0 only in a measurement stored before the API refused it, whose profile is not placed',
    }),
    measured_at: z.string(),
  })
  .openapi('StoredMeasurement');

/** What `llmgw ctl bench` stores: how many requests in flight one replica serves within its SLO. */
export function measurementsRouter(deps: ApiDeps) {
  const app = newRouter();
  const { sql } = deps;

  app.openapi(
    createRoute({
      middleware: [permits('change-model'), jsonBody(BODY_LIMIT)] as const,
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
      const model = await existingModelInView(c, sql, input.model, 'change-model');
      await authorize(c, 'change-model', { scope: model.owner, model: model.name });
      if (!model.profiles.some((p) => p.name === input.profile)) {
        throw new ApiError(400, `model ${input.model} has no profile "${input.profile}"`);
      }
      const measuredAt = new Date(input.measured_at ?? (deps.now ?? Date.now)()).toISOString();
      const ofProfile = async (tx: Db) =>
        (await listMeasurements(tx, input.model)).find((m) => m.profile === input.profile) ?? null;
      await recordedChange(c, deps, {
        action: 'measurement.put',
        target: `measurement:${input.model}/${input.profile}`,
        read: ofProfile,
        apply: (tx) => putMeasurement(tx, { ...input, measured_at: measuredAt }),
        tell: { models: [input.model], why: 'measurementChanged' },
      });
      return c.json({ model: input.model, profile: input.profile }, 200);
    },
  );

  app.openapi(
    createRoute({
      middleware: [permits('read')] as const,
      method: 'get',
      path: '/measurements',
      tags: ['measurements'],
      summary: 'List measurements',
      request: { query: z.strictObject({ model: z.string().max(63).optional() }) },
      responses: {
        200: jsonContent(z.array(StoredMeasurementSchema)),
        ...errors(400, 503),
      },
    }),
    async (c) => {
      const [measurements, models, shown] = await Promise.all([
        listMeasurements(sql, c.req.valid('query').model),
        listModels(sql),
        visibility(c),
      ]);
      // A measurement of a model deleted since is owned by none: only callers who see everything see it.
      const owners = new Map(models.map((model) => [model.name, model.owner]));
      return c.json(
        measurements.filter((m) => shown(owners.get(m.model) ?? null)),
        200,
      );
    },
  );
  return app;
}
