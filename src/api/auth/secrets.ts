import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

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
