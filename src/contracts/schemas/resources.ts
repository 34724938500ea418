import { z } from '@hono/zod-openapi';
import type { Dimension } from '../../domain/resources.ts';

/**
 * Messages are completed with the field's path by the API ("guarantee.gpus must be a whole number").
 * Bounded far above any cluster, so that sums of amounts stay finite numbers (near 1e308 they overflow).
 */
const amount = () =>
  z
    .number({ error: 'must be a number' })
    .finite({ error: 'must be a finite number' })
    .min(0, { error: 'must not be negative' })
    .max(1e12, { error: 'must be at most 1e12' });

/**
 * Cores and GiB count in thousandths (GPUs whole): an amount below the unit but not 0 (1e-300) would
 * round to nothing in sums and so pass every limit. A value is taken when it is the number written
 * with at most 3 decimals, which refuses both.
 */
const inThousandths = (value: number) => Number(value.toFixed(3)) === value;

const fractional = () =>
  amount()
    .refine(inThousandths, { error: 'must have at most 3 decimals (it counts in steps of 0.001)' })
    .openapi({ description: 'at most 3 decimals (steps of 0.001)' });

/** One check per dimension of the domain's Resources, no more, no fewer (the `satisfies` holds them equal). */
const dimensions = {
  gpus: amount().int({ error: 'must be a whole number' }).optional(),
  cores: fractional().optional(),
  memory_gib: fractional().optional(),
} satisfies Record<Dimension, z.ZodType<number | undefined>>;

/** The one check of a Resources value from outside: an API body, a cluster file. */
export const ResourcesSchema = z
  .strictObject(dimensions)
  .openapi('Resources', { example: { gpus: 8, cores: 64, memory_gib: 512 } });
