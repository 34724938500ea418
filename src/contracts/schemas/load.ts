import { z } from '@hono/zod-openapi';
import { MAX_REPORTED_REQUESTS } from '../../domain/model.ts';

/** Requests in flight and waiting, as every load source reports them. */
export const LOAD_COUNTS = {
  in_flight: z.number().int().min(0).max(MAX_REPORTED_REQUESTS),
  waiting: z.number().int().min(0).max(MAX_REPORTED_REQUESTS).default(0),
};

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
