import { z } from '@hono/zod-openapi';

/**
 * A throughput in tokens/s, as bench results and targets give it: bounded far above any model, so that
 * the sums sizing makes of them stay finite numbers (near 1e308 they overflow and answer null).
 */
export const tokensPerSec = () => z.number().finite().min(0).max(1e12, { error: 'must be at most 1e12' });
