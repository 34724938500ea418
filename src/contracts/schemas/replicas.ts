import { z } from '@hono/zod-openapi';
import { REPLICA_STATES } from '../../domain/cluster.ts';
import { PreemptedForSchema } from './models.ts';
import { ResourcesSchema } from './resources.ts';

export const ReplicaViewSchema = z
  .object({
    id: z.string(),
    model: z.string(),
    profile: z.string(),
    node: z.string(),
    resources: ResourcesSchema,
    state: z.enum(REPLICA_STATES),
    protected: z.boolean(),
    created_at: z.string(),
    endpoint: z
      .string()
      .nullable()
      .openapi({ description: "the engine's base URL, once its driver knows it" }),
    preempted_for: PreemptedForSchema,
    reason: z.string().nullable().openapi({
      description:
        "why it last moved, when it was told: the engine's own words and its log's end for a failed start or a crash, the silence of its node's agent for a lost one, what took its room for a drained one",
    }),
  })
  .openapi('Replica');

/** A replica as GET /api/v1/replicas answers it (its clients, the CLI and the console, read this type). */
export type ReplicaAnswer = z.infer<typeof ReplicaViewSchema>;
