import { z } from '@hono/zod-openapi';
import { MAX_REPORTED_REQUESTS } from '../../domain/model.ts';

/** The latest instant a JavaScript Date holds (ms since the epoch). */
const LATEST_TIME_MS = 8.64e15;

/** Requests in flight and waiting, as every load source reports them. */
export const LOAD_COUNTS = {
  in_flight: z.number().int().min(0).max(MAX_REPORTED_REQUESTS),
  waiting: z.number().int().min(0).max(MAX_REPORTED_REQUESTS).default(0),
  waiting_since: z
    .number({ error: 'must be a number: milliseconds since the epoch' })
    .int({ error: 'must be a whole number of milliseconds since the epoch' })
    .min(0, { error: 'must be at least 0 (milliseconds since the epoch)' })
    .max(LATEST_TIME_MS, { error: `must be at most ${LATEST_TIME_MS} (milliseconds since the epoch)` })
    .optional()
    .openapi({
      description:
        'since when requests have waited without a break (ms since the epoch), when some wait: a queue that began after the reconciler last saw requests waiting is a new burst',
    }),
};

/** Refuses a `waiting_since` with no request waiting: a report says since when its queue waits, or nothing. */
export function sinceOnlyWhenWaiting(
  counts: { waiting: number; waiting_since?: number },
  context: z.RefinementCtx,
) {
  if (counts.waiting_since !== undefined && counts.waiting === 0)
    context.addIssue({
      code: 'custom',
      path: ['waiting_since'],
      message: 'is only for requests waiting: leave it out when waiting is 0',
    });
}

/**
 * What a load report is answered: the model's load and capacity at SLO, and whether it woke its
 * reconciler (at once, or 250 ms after the last signal when one came just before).
 */
export const LoadReceiptSchema = z
  .object({
    model: z.string(),
    in_flight: z.number(),
    capacity_at_slo: z.number(),
    zone: z.string(),
    signalled: z.boolean(),
  })
  .openapi('LoadReceipt');
