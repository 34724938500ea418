import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * The password of an embedded Postgres's data folder, kept in `file` (mode 0600): read when it
 * exists, else made (32 random bytes) and written there before any Postgres is given it.
 */
export function keptPassword(file: string): string {
  if (!existsSync(file)) {
    writeFileSync(file, `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600, flag: 'wx' });
  }
  // Readable by its owner alone, even when it was copied in with a wider mode.
  chmodSync(file, 0o600);
  const password = readFileSync(file, 'utf8').trim();
  if (!/^[\w-]{16,}$/.test(password)) {
    throw new Error(
      `${file} does not hold a password (16 or more letters, digits, "-" or "_"); remove it to make one`,
    );
  }
  return password;
}
