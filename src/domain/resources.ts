import { z } from '@hono/zod-openapi';

/** The dimensions a quota, a profile or a node can set, in display order. */
export const DIMENSIONS = ['gpus', 'cores', 'memory_gib'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** GPUs, cores and memory. In a quota an absent dimension is not set: no guarantee, no limit on it. */
export type Resources = Partial<Record<Dimension, number>>;

const amount = (what: string) =>
  z
    .number({ error: `${what} must be a number` })
    .finite({ error: `${what} must be a finite number` })
    .min(0, { error: `${what} must not be negative` });

export const ResourcesSchema = z
  .strictObject({
    gpus: amount('gpus').int({ error: 'gpus must be a whole number' }).optional(),
    cores: amount('cores').optional(),
    memory_gib: amount('memory_gib').optional(),
  })
  .openapi('Resources', { example: { gpus: 8, cores: 64, memory_gib: 512 } });
