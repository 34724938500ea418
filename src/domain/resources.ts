/** The dimensions a quota, a profile or a node can set, in display order. */
export const DIMENSIONS = ['gpus', 'cores', 'memory_gib'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** GPUs, cores and memory. In a quota an absent dimension is not set: no guarantee, no limit on it. */
export type Resources = Partial<Record<Dimension, number>>;
