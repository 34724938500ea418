import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { createRequire } from 'node:module';
import type { ZxcvbnFactory } from '@zxcvbn-ts/core';

const require = createRequire(import.meta.url);

/** A new token's secret: `llmgw_` and 32 random bytes, base64url. Shown once; only its hash is kept. */
export const newSecret = () => `llmgw_${randomBytes(32).toString('base64url')}`;

/**
 * The hash kept for a secret. A fast sha256 rather than a slow password hash (bcrypt, scrypt): a slow
 * hash protects guessable passwords, but a secret of 256 random bits cannot be guessed however fast
 * each guess is, so slowness would only add latency to every request. A leaked table of these hashes
 * still lets nobody in. (LLMGW_ADMIN_TOKEN, the one secret a person picks, must be long for this reason.)
 */
export const hashSecret = (secret: string): Buffer => createHash('sha256').update(secret).digest();

/** Compares two hashes in constant time, so that how long it takes tells nothing about a stored hash. */
export const sameHash = (a: Buffer, b: Buffer) => a.length === b.length && timingSafeEqual(a, b);

/** The least estimated strength of a secret given in the environment (LLMGW_ADMIN_TOKEN), in bits. */
export const STRONG_SECRET_BITS = 128;

/**
 * A secret's strength as its characters tell it: its length times the entropy of how often each
 * character occurs. It cannot see patterns, only repeats (32 times `a` is 0 bits), and it is below
 * the truth for random secrets (32 random bytes in base64 or hex estimate at least 180 bits).
 */
export function estimatedBits(secret: string): number {
  const counts = new Map<string, number>();
  for (const char of secret) counts.set(char, (counts.get(char) ?? 0) + 1);
  let bits = 0;
  for (const count of counts.values()) bits -= count * Math.log2(count / secret.length);
  return bits;
}

/**
 * The least number of guesses (log10) zxcvbn must estimate for a secret given in the environment:
 * 10^25, about 83 bits. zxcvbn sees what estimatedBits cannot: words, keyboard walks, sequences, dates
 * and their repeats (`Password1234567890Password123456` is 10^12). Random secrets of 32 characters
 * estimate near 10^31, those llmgw and `openssl rand -base64 32` make above 10^40.
 */
export const STRONG_SECRET_GUESSES_LOG10 = 25;

let estimator: ZxcvbnFactory | undefined;

/**
 * zxcvbn's estimate of the guesses a secret takes, as log10 (@zxcvbn-ts, with its common and English
 * dictionaries: built when first asked, since only a start with a secret in the environment asks).
 */
export function guessesLog10(secret: string): number {
  estimator ??= newEstimator();
  return estimator.check(secret).guessesLog10;
}

/**
 * zxcvbn and its dictionaries, loaded here rather than imported: they take 170 ms to load and keep
 * 11.5 MB of heap, in every process that imports this module (each gateway worker hashes keys with it).
 */
function newEstimator(): ZxcvbnFactory {
  const { ZxcvbnFactory } = require('@zxcvbn-ts/core') as typeof import('@zxcvbn-ts/core');
  const common = require('@zxcvbn-ts/language-common') as typeof import('@zxcvbn-ts/language-common');
  const en = require('@zxcvbn-ts/language-en') as typeof import('@zxcvbn-ts/language-en');
  return new ZxcvbnFactory({
    dictionary: { ...common.dictionary, ...en.dictionary },
    graphs: common.adjacencyGraphs,
  });
}
