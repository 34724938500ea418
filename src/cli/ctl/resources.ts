import { parseResourcePairs } from '../../domain/resource-pairs.ts';
import { DIMENSIONS, type Resources } from '../../domain/resources.ts';
import { UsageError } from './errors.ts';

/** `gpus=8,cores=64,memory_gib=512` as resources; the server checks the values (whole GPUs, >= 0). */
export function parseResources(text: string, option: string): Resources {
  try {
    return parseResourcePairs(text, option);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

/** The inverse of parseResources, for tables: `gpus=8,cores=64`; "-" when nothing is set. */
export function formatResourceOption(resources: Resources | null | undefined): string {
  const parts = DIMENSIONS.filter((d) => resources?.[d] !== undefined).map((d) => `${d}=${resources?.[d]}`);
  return parts.length ? parts.join(',') : '-';
}

/** What is held or borrowed, for tables: the dimensions above zero, or "0". */
export function formatUsage(resources: Resources | null | undefined): string {
  const used = Object.fromEntries(Object.entries(resources ?? {}).filter(([, value]) => value !== 0));
  return Object.keys(used).length ? formatResourceOption(used) : '0';
}
