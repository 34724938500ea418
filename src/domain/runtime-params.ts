import type { Profile } from './model.ts';
import type { ParamRule, ParamValue, RuntimeSpec } from './runtime.ts';

// The one check of a runtime's parameters, and the one filling of its templates: the API refuses a
// profile whose parameters fail it, and the agent runs it again before it fills the command line, so
// that a runtime changed since (or a store written by hand) still cannot pass a value its rule refuses.

/** `{params.NAME}` in a runtime's templates. */
export const PARAM_REFERENCE = /\{params\.([a-z][a-z0-9_]*)\}/g;
/** A parameter's name: what an operator writes in a profile's `params`. */
export const PARAM_NAME = /^[a-z][a-z0-9_]{0,62}$/;
/** Longer than any model ID or path an operator needs to choose. */
export const MAX_PARAM_CHARS = 512;

/** The names a runtime's templates use, in the order they first appear. */
export function referencedParams(runtime: RuntimeSpec): string[] {
  const words = [
    runtime.model ?? '',
    ...(runtime.args ?? []),
    ...(runtime.argv ?? []),
    ...Object.values(runtime.env ?? {}),
  ];
  return [...new Set(words.flatMap((word) => [...word.matchAll(PARAM_REFERENCE)].map(([, name]) => name)))];
}

/**
 * Why `value` does not fit `rule` (a phrase after "parameter X"), or null. Whatever the rule, a string
 * never starts with "-" (it would be read as a flag), never holds a brace (a placeholder), a control
 * character or a ".." path segment (a climb out of a prefix).
 */
export function paramRefusal(rule: ParamRule, value: unknown): string | null {
  switch (rule.type) {
    case 'boolean':
      return typeof value === 'boolean' ? null : 'must be true or false';
    case 'integer':
    case 'number': {
      const whole = rule.type === 'integer';
      const range = `${whole ? 'a whole number' : 'a number'} from ${rule.min} to ${rule.max}`;
      if (typeof value !== 'number' || !Number.isFinite(value) || (whole && !Number.isInteger(value)))
        return `must be ${range}`;
      return value < rule.min || value > rule.max ? `must be ${range}` : null;
    }
    case 'string': {
      if (typeof value !== 'string') return 'must be a string';
      if (value.length === 0 || value.length > MAX_PARAM_CHARS)
        return `must be 1 to ${MAX_PARAM_CHARS} characters`;
      if (value.startsWith('-')) return 'must not start with "-" (it would be read as a flag)';
      // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
      if (/[{}\u0000-\u001f\u007f]/.test(value)) return 'must not hold braces or control characters';
      if (value.split('/').includes('..')) return 'must not hold a ".." path segment';
      if (rule.allowed && !rule.allowed.includes(value))
        return `must be one of ${rule.allowed.map((a) => JSON.stringify(a)).join(', ')}`;
      if (rule.prefix !== undefined && !value.startsWith(rule.prefix))
        return `must start with ${JSON.stringify(rule.prefix)}`;
      if (rule.pattern !== undefined && !anchored(rule.pattern).test(value))
        return `must match ${rule.pattern}`;
      return null;
    }
  }
}

/** A runtime's pattern matches the whole value, never a part of it. */
export const anchored = (pattern: string) => new RegExp(`^(?:${pattern})$`, 'u');

export type ParamsChecked = { ok: true; values: Record<string, ParamValue> } | { ok: false; why: string };

/**
 * The parameters a profile gives `runtime`, checked against its rules, with the defaults of those not
 * given; or the one sentence that names the runtime and the first parameter refused.
 */
export function checkParams(
  name: string,
  runtime: RuntimeSpec,
  given: Record<string, unknown> = {},
): ParamsChecked {
  const rules = runtime.params ?? {};
  const takes = Object.keys(rules);
  const values: Record<string, ParamValue> = {};
  for (const [param, value] of Object.entries(given)) {
    const rule = rules[param];
    if (!rule) {
      const which = takes.length > 0 ? `it takes ${takes.join(', ')}` : 'it takes none';
      return { ok: false, why: `runtime "${name}" takes no parameter "${param}": ${which}` };
    }
    const why = paramRefusal(rule, value);
    if (why) return { ok: false, why: `runtime "${name}": parameter "${param}" ${why}` };
    values[param] = value as ParamValue;
  }
  for (const [param, rule] of Object.entries(rules)) {
    if (param in values) continue;
    if (rule.default !== undefined) values[param] = rule.default;
    // A template needs every value it names; a sim setting left out is the sim engine's own default.
    else if (referencedParams(runtime).includes(param))
      return { ok: false, why: `runtime "${name}" needs parameter "${param}"` };
  }
  return { ok: true, values };
}

/** What an agent runs for a profile that names a runtime: an engine as an admin would write it inline. */
export interface ResolvedRuntime {
  engine: { kind: string } & Record<string, unknown>;
  /** Fixed variables of the runtime, parameters filled in. */
  env: Record<string, string>;
  /** Variable name -> secret name, read by the agent on its node. */
  secretEnv: Record<string, string>;
}

/**
 * The runtime's templates filled with the checked parameters: each `{params.NAME}` becomes the value
 * as text, inside the one word it stands in (never split into more words, never given to a shell).
 */
export function resolveRuntime(
  name: string,
  runtime: RuntimeSpec,
  given?: Record<string, unknown>,
): { ok: true; resolved: ResolvedRuntime } | { ok: false; why: string } {
  const checked = checkParams(name, runtime, given);
  if (!checked.ok) return checked;
  const fill = (word: string) =>
    word.replace(PARAM_REFERENCE, (_, param: string) => String(checked.values[param]));
  const timeout = runtime.start_timeout_s === undefined ? {} : { start_timeout_s: runtime.start_timeout_s };
  const engine =
    runtime.kind === 'sim'
      ? { kind: 'sim', ...checked.values, ...timeout }
      : runtime.kind === 'command'
        ? { kind: 'command', argv: (runtime.argv ?? []).map(fill), ...timeout }
        : {
            kind: runtime.kind,
            model: fill(runtime.model ?? ''),
            ...(runtime.args && { args: runtime.args.map(fill) }),
            ...timeout,
          };
  const env = Object.fromEntries(Object.entries(runtime.env ?? {}).map(([key, value]) => [key, fill(value)]));
  return { ok: true, resolved: { engine, env, secretEnv: { ...runtime.secret_env } } };
}

/**
 * The engine a profile runs: its inline engine, or its runtime resolved with its parameters; undefined
 * for none, or for a runtime missing or refusing them (the agent's start says why).
 */
export function profileEngine(
  profile: Pick<Profile, 'engine' | 'runtime' | 'params'>,
  runtimes: ReadonlyMap<string, RuntimeSpec>,
): ResolvedRuntime['engine'] | undefined {
  if (profile.runtime === undefined) return profile.engine;
  const runtime = runtimes.get(profile.runtime);
  const resolved = runtime && resolveRuntime(profile.runtime, runtime, profile.params);
  return resolved?.ok ? resolved.resolved.engine : undefined;
}

/** A parameter's rule in words: `string starting with "Qwen/"`, `integer from 1024 to 32768, default 8192`. */
export function describeRule(rule: ParamRule): string {
  const how =
    rule.type === 'string'
      ? rule.allowed
        ? ` one of ${rule.allowed.map((a) => JSON.stringify(a)).join(', ')}`
        : rule.prefix !== undefined
          ? ` starting with ${JSON.stringify(rule.prefix)}`
          : ` matching ${rule.pattern}`
      : rule.type === 'boolean'
        ? ''
        : ` from ${rule.min} to ${rule.max}`;
  return `${rule.type}${how}${rule.default === undefined ? '' : `, default ${JSON.stringify(rule.default)}`}`;
}
