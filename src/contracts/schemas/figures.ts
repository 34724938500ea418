import { z } from '@hono/zod-openapi';

/** Every dimension's amount, 0 where there is none: what a scope holds or borrows. */
export const FiguresSchema = z.object({ gpus: z.number(), cores: z.number(), memory_gib: z.number() });
