import { readFileSync } from 'node:fs';
import { z } from 'zod';
import {
  estimatedBits,
  guessesLog10,
  STRONG_SECRET_BITS,
  STRONG_SECRET_GUESSES_LOG10,
} from './contracts/secrets.ts';
import { MIN_TEMPORAL_KEY_BYTES } from './contracts/temporal-credentials.ts';

/**
 * The checks of config.ts's environment schema, one per kind of setting. Each refusal is the end of a
 * sentence that starts with the variable's name (`PORT=x is not ...` where `shown`, else `NAME must ...`,
 * for secrets): config.ts's readConfig writes it whole.
 */
type Ctx = z.RefinementCtx;
/** How a refusal is written: `NAME=VALUE message`, `NAME message` (a secret's value is not shown), or whole. */
type Form = 'shown' | 'named' | 'whole';
export const refuse = (ctx: Ctx, message: string, form: Form = 'shown', path?: string) => {
  ctx.addIssue({ code: 'custom', message, params: { form }, ...(path && { path: [path] }) });
  return z.NEVER;
};
const blank = (raw: string | undefined): raw is undefined | '' => raw === undefined || raw === '';
const raw = z.string().optional();

/** A number of at least `min` (a whole one where `integer`); `fallback` when unset or empty. */
export const number = (fallback: number, { integer = false, min = 0 } = {}) =>
  raw.transform((text, ctx) => {
    if (blank(text)) return fallback;
    const value = Number(text);
    if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
      return refuse(ctx, `is not ${integer ? 'a whole number' : 'a number'} >= ${min}`);
    }
    return value;
  });

export const port = (fallback: number) => number(fallback, { integer: true, min: 1 });

/** Seconds in the environment, milliseconds in the config. */
export const seconds = (fallback: number, min = 0) => number(fallback, { min }).transform((s) => s * 1000);

/** Any text; `fallback` when unset or empty. */
export const text = <T extends string | undefined>(fallback: T) =>
  raw.transform((value) => (blank(value) ? fallback : value));

/** A setting that is on or off: 1 or 0 (unset or empty: off). */
export const flag = raw.transform((value, ctx) => {
  if (blank(value) || value === '0') return false;
  if (value === '1') return true;
  return refuse(ctx, 'must be 1 (on) or 0 (off)');
});

/** An http(s) URL without its trailing slash; it ends up in the console's links, so nothing else is taken. */
export const httpUrl = raw.transform((value, ctx) => {
  if (blank(value)) return undefined;
  if (!/^https?:\/\/[^\s"'<>]+$/.test(value) || !URL.canParse(value)) {
    return refuse(ctx, 'is not an http:// or https:// URL');
  }
  return value.replace(/\/+$/, '');
});

/**
 * A token's secret (LLMGW_ADMIN_TOKEN, LLMGW_METRICS_TOKEN), as read from NAME or NAME_FILE. Only its
 * hash is kept, which protects a long random secret but not a short one (contracts/secrets.ts); and it
 * travels as a bearer token, whose characters are few (RFC 6750).
 */
export function checkSecret(value: string | undefined, ctx: Ctx, name: string): string | undefined {
  if (!value) return undefined;
  const make = 'make one with: openssl rand -base64 32';
  if (!/^[\w\-.~+/]{32,512}=*$/.test(value)) {
    return refuse(ctx, `must be 32 to 512 letters, digits or "-._~+/"; ${make}`, 'named', name);
  }
  const bits = estimatedBits(value);
  if (bits < STRONG_SECRET_BITS) {
    return refuse(
      ctx,
      `is too easy to guess (its characters repeat: about ${Math.floor(bits)} bits, ${STRONG_SECRET_BITS} needed); ${make}`,
      'named',
      name,
    );
  }
  const guesses = guessesLog10(value);
  if (guesses < STRONG_SECRET_GUESSES_LOG10) {
    return refuse(
      ctx,
      `is too easy to guess (it follows words or patterns: about 10^${Math.floor(guesses)} guesses, 10^${STRONG_SECRET_GUESSES_LOG10} needed); ${make}`,
      'named',
      name,
    );
  }
  return value;
}

/** A key kept in a file (its surrounding blanks dropped), at least MIN_TEMPORAL_KEY_BYTES; undefined when unset. */
export const keyFile = raw.transform((path, ctx) => {
  if (!path) return undefined;
  let key: Buffer;
  try {
    key = Buffer.from(readFileSync(path, 'utf8').trim());
  } catch (error) {
    return refuse(ctx, `cannot be read: ${(error as NodeJS.ErrnoException).code ?? error}`);
  }
  if (key.length < MIN_TEMPORAL_KEY_BYTES) {
    return refuse(
      ctx,
      `holds ${key.length} bytes, fewer than ${MIN_TEMPORAL_KEY_BYTES}; make one with: openssl rand -base64 32`,
    );
  }
  return key;
});

/** A load source name part: letters, digits, ".", "_" or "-" (the API's LoadReport source rule). */
export const gatewayInstance = (fallback: () => string) =>
  raw.transform((value, ctx) => {
    const instance = value || fallback();
    if (!/^[A-Za-z0-9][\w.-]{0,79}$/.test(instance)) {
      return refuse(ctx, 'must be 1 to 80 letters, digits, ".", "_" or "-", starting with a letter or digit');
    }
    return instance;
  });

/** `NAME=VALUE ...` or `NAME ...`: the sentence of an issue of the environment's schema. */
export function sentence(issue: z.core.$ZodIssue, env: Record<string, string | undefined>): string {
  const name = String(issue.path[0] ?? 'the environment');
  const form = issue.code === 'custom' ? (issue.params?.form as Form) : 'named';
  if (form === 'whole') return issue.message;
  return form === 'shown' ? `${name}=${env[name]} ${issue.message}` : `${name} ${issue.message}`;
}
