import { readSecretFile, secretFromEnv } from '../../secret-file.ts';
import { apiUrlFromEnv, DEFAULT_API_URL } from '../api-url.ts';
import type { Input, OptionSpec } from './command.ts';
import { UsageError } from './errors.ts';
import { FORMATS, type Format } from './output.ts';

/** Options every command takes, before or after its words. */
export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  server: {
    type: 'string',
    value: 'URL',
    description: `the llmgw API (env LLMGW_URL, default ${DEFAULT_API_URL})`,
  },
  token: {
    type: 'string',
    value: 'TOKEN',
    description:
      'sent as Authorization: Bearer (env LLMGW_TOKEN); on a command line, ps shows it to everyone',
  },
  'token-file': {
    type: 'string',
    value: 'PATH',
    description: 'the token read from this file instead (env LLMGW_TOKEN_FILE)',
  },
  output: {
    type: 'string',
    short: 'o',
    value: 'FORMAT',
    description: 'table (for people, the default), json or yaml',
  },
  help: { type: 'boolean', short: 'h', description: 'this help' },
};

export function globalSettings(
  input: Input,
  env: Record<string, string | undefined>,
  warn: (line: string) => void,
) {
  const format = (input.values.output as string | undefined) ?? 'table';
  if (!FORMATS.includes(format as Format))
    throw new UsageError(`-o ${format}: the format is one of ${FORMATS.join(', ')}`);
  return {
    server: (input.values.server as string | undefined) ?? apiUrlFromEnv(env, warn),
    token: tokenOf(input, env),
    format: format as Format,
  };
}

/** --token, else --token-file, else LLMGW_TOKEN or LLMGW_TOKEN_FILE. */
function tokenOf(input: Input, env: Record<string, string | undefined>): string | undefined {
  const given = input.values.token as string | undefined;
  const file = input.values['token-file'] as string | undefined;
  if (given !== undefined && file !== undefined)
    throw new UsageError('give --token or --token-file, not both');
  try {
    if (file !== undefined) return readSecretFile(file, '--token-file');
    return given ?? secretFromEnv(env, 'LLMGW_TOKEN');
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

type NumberRule = { integer?: boolean; min?: number; positive?: boolean };

/** A numeric option: absent gives `fallback`; anything but a number in range is a usage error. */
export function numberOption(input: Input, name: string, rule: NumberRule, fallback: number): number;
export function numberOption(input: Input, name: string, rule: NumberRule): number | undefined;
export function numberOption(input: Input, name: string, rule: NumberRule, fallback?: number) {
  const given = input.values[name] as string | undefined;
  if (given === undefined) return fallback;
  const value = Number(given);
  const kind = rule.integer ? 'whole number' : 'number';
  if (given.trim() === '' || !Number.isFinite(value) || (rule.integer && !Number.isInteger(value))) {
    throw new UsageError(`--${name} ${given}: not a ${kind}`);
  }
  if (rule.positive && value <= 0) throw new UsageError(`--${name} must be above 0`);
  if (rule.min !== undefined && value < rule.min)
    throw new UsageError(`--${name} must be at least ${rule.min}`);
  return value;
}
