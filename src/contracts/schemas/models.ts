import { z } from '@hono/zod-openapi';
import { EngineSchema } from './engine.ts';
import { ObjectNameSchema, ScopeRefSchema } from './names.ts';
import { nullableRef } from './nullable.ts';
import { ResourcesSchema } from './resources.ts';
import { ParamsSchema } from './runtime.ts';

// What more than one route shares about models: a profile is given (PUT) and shown (GET), a decision is
// shown with its model and in its history, an owner is given with the spec or on its own, and the
// summary is the list's row and the start of one model's detail.

export const ProfileSchema = z
  .strictObject({
    name: ObjectNameSchema,
    priority: z.number().int().min(-1000).max(1000).default(0),
    resources: ResourcesSchema,
    gpu_model: z.string().min(1).max(63).optional(),
    default_concurrency: z.number().int().min(1).max(1_000_000).optional(),
    engine: EngineSchema.optional().openapi({
      description: "an inline engine: an admin's only; others keep a stored one as it is",
    }),
    runtime: ObjectNameSchema.optional().openapi({
      description: 'the admin-defined runtime that runs it (GET /api/v1/runtimes)',
    }),
    params: ParamsSchema.optional(),
  })
  .openapi('Profile');

export const DecisionSchema = z
  .object({
    at: z.string(),
    action: z.string(),
    reason: z.string(),
    replica: z.string().optional(),
    profile: z.string().optional(),
    node: z.string().optional(),
    inputs: z.record(z.string(), z.unknown()),
  })
  .openapi('Decision');

/** The bound of a model's priority either way; the store's check (migration 006) holds the same. */
const MAX_MODEL_PRIORITY = 1_000_000;
const PRIORITY_RANGE = `must be between -${MAX_MODEL_PRIORITY} and ${MAX_MODEL_PRIORITY}`;

/** A model's priority as a PUT gives it (not a profile's): a whole number, higher keeps its replicas first. */
export const ModelPrioritySchema = z
  .number()
  .int()
  .min(-MAX_MODEL_PRIORITY, { error: PRIORITY_RANGE })
  .max(MAX_MODEL_PRIORITY, { error: PRIORITY_RANGE });

/** On a replica (in a model's detail and the replicas list): absent unless it frees room for a model. */
export const PreemptedForSchema = z.string().optional().openapi({
  description: 'while it drains: the model it was preempted for',
});

/** Sentences about an accepted change that the caller should know of (a limit that stops the model). */
export const WarningsSchema = z.array(z.string()).optional();

/** An owner as a body gives it: a scope, or "" or null for none (the original API cleared with ""). */
export const OwnerInputSchema = z.union([ScopeRefSchema, z.literal(''), z.null()]);

/** One model as the list shows it: live figures beside the newest decision, and which is newer. */
export const ModelSummarySchema = z
  .object({
    name: z.string(),
    owner: z.string().openapi({ description: 'the owner scope key; "" when the model has none' }),
    owner_name: z.string().nullable(),
    priority: z.number().int().openapi({ description: "the model's priority among models (0 unless set)" }),
    min_replicas: z.number(),
    max_replicas: z.number(),
    target_tokens_per_sec: z.number().optional(),
    replicas: z.record(z.string(), z.number()),
    in_flight: z.number().nullable(),
    load_reported_at: z
      .string()
      .nullable()
      .openapi({ description: 'when the newest load report was made (fresh or not); null when never' }),
    capacity_at_slo: z.number(),
    status: z.string(),
    last_decision: nullableRef(DecisionSchema),
    freshness: z.string().nullable().openapi({
      description:
        'null when last_decision saw the in_flight shown; else which is newer, e.g. "decided at T, on figures from before the load reported at T2 (it saw no known load, now 11 in flight)"',
    }),
  })
  .openapi('ModelSummary');

export type ModelSummary = z.infer<typeof ModelSummarySchema>;
