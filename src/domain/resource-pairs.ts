import { DIMENSIONS, type Dimension, type Resources } from './resources.ts';

/**
 * `gpus=8,cores=96,memory_gib=1024` as resources, for the options that take them (the agent's
 * --capacity, the CLI's --guarantee, --limit, --max-capacity): names and numbers only, each mistake one
 * sentence starting with `option`. Whether the values are allowed (whole GPUs, >= 0) is the
 * ResourcesSchema's to say, where they are checked.
 */
export function parseResourcePairs(text: string, option: string): Resources {
  const given: Resources = {};
  for (const pair of text.split(',').map((part) => part.trim())) {
    const match = /^([a-z_]+)\s*=(.*)$/.exec(pair);
    if (!match) throw new Error(`${option} takes name=value pairs like gpus=8,cores=96, not "${pair}"`);
    const [, name, value] = match;
    if (!DIMENSIONS.includes(name as Dimension)) {
      throw new Error(`${option} unknown dimension "${name}" (${DIMENSIONS.join(', ')})`);
    }
    if (name in given) throw new Error(`${option} gives ${name} twice`);
    const amount = value.trim() === '' ? Number.NaN : Number(value);
    if (!Number.isFinite(amount)) throw new Error(`${option} ${name} must be a number, not "${value}"`);
    given[name as Dimension] = amount;
  }
  return given;
}
