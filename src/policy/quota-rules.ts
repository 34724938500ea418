import type { Dimension, Resources } from '../domain/resources.ts';
import { exceeding } from './resources.ts';

/**
 * The first dimension on which a guarantee is larger than the limit of the same quota, or null.
 * Such a quota is refused (POLICY.md "Limit"): room could be promised that may never be used.
 */
export const guaranteeAboveLimit = (guarantee?: Resources, limit?: Resources): Dimension | null =>
  guarantee && limit ? exceeding(guarantee, limit) : null;
