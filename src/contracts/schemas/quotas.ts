import { z } from '@hono/zod-openapi';
import { ResourcesSchema } from './resources.ts';

export const QuotaPreviewSchema = z
  .object({
    scope: z.string(),
    became_borrowed: z.array(z.string()),
    became_protected: z.array(z.string()),
    reclaimable: z.array(z.object({ replica: z.string(), model: z.string(), resources: ResourcesSchema })),
    blocked_models: z.array(
      z.object({
        model: z.string(),
        why: z.string(),
        preempts: z
          .array(z.string())
          .optional()
          .openapi({ description: 'replicas of a lower claim it would preempt to start all the same' }),
      }),
    ),
    warnings: z
      .array(z.string())
      .describe('Why the guarantee cannot be honoured as written (nesting caps it).'),
    priority: z
      .object({
        value: z.number().int(),
        above: z.array(z.string()),
        equal: z.array(z.string()),
        below: z.array(z.string()),
      })
      .openapi({
        description:
          "the scope's priority as it would be set, and its siblings (scopes and models beneath the same parent) above, equal to and below it, each with its priority",
      }),
  })
  .openapi('QuotaPreview');

/** What POST /api/v1/quotas/preview answers (its clients, the CLI and the console, read this type). */
export type QuotaPreviewAnswer = z.infer<typeof QuotaPreviewSchema>;
