import { randomBytes } from 'node:crypto';

const ALPHABET = 'abcdefghijkmnpqrstuvwxyz23456789';

/** A short random ID (10 characters, about 50 bits), easy to read and to type. */
export function newId(): string {
  return [...randomBytes(10)].map((byte) => ALPHABET[byte % ALPHABET.length]).join('');
}
