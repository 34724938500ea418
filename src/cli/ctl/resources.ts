import { DIMENSIONS, type Resources } from '../../domain/resources.ts';
import { UsageError } from './errors.ts';

/** `gpus=8,cores=64,memory_gib=512` as resources; the server checks the values (whole GPUs, >= 0). */
export function parseResources(text: string, option: string): Resources {
  const resources: Resources = {};
  for (const part of text.split(',').map((p) => p.trim())) {
    const match = /^(\w+)=(.+)$/.exec(part);
    const name = match?.[1] as (typeof DIMENSIONS)[number] | undefined;
    if (!match || !name || !DIMENSIONS.includes(name)) {
      throw new UsageError(
        `${option}: "${part}" is not NAME=NUMBER with NAME one of ${DIMENSIONS.join(', ')}`,
      );
    }
    const value = Number(match[2]);
    if (!Number.isFinite(value)) throw new UsageError(`${option}: ${name}=${match[2]} is not a number`);
    resources[name] = value;
  }
  return resources;
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
