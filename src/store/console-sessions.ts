import { randomBytes } from 'node:crypto';
import { hashSecret } from '../contracts/secrets.ts';
import type { Db } from './db.ts';

/** What a session ID looks like; anything else is no session, and the store is not asked about it. */
export const SESSION_ID = /^llmgw_session_[\w-]{43}$/;

/**
 * A new console session for the token whose secret hashes to `tokenHash`, lasting `maxAgeS`: its
 * opaque ID (what the cookie holds), of 256 random bits. Sessions past their end are swept meanwhile.
 */
export async function createSession(
  db: Db,
  tokenHash: Buffer,
  maxAgeS: number,
  now: number,
): Promise<string> {
  const id = `llmgw_session_${randomBytes(32).toString('base64url')}`;
  await db`delete from console_sessions where expires_at <= ${new Date(now)}`;
  await db`
    insert into console_sessions (id_sha256, token_sha256, expires_at)
    values (${hashSecret(id)}, ${tokenHash}, ${new Date(now + maxAgeS * 1000)})`;
  return id;
}

/** The hash of the token a live session signed in with; null for an ID that is unknown, ended or past its end. */
export async function sessionToken(db: Db, id: string, now: number): Promise<Buffer | null> {
  const [row] = await db<{ token_sha256: Buffer }[]>`
    select token_sha256 from console_sessions where id_sha256 = ${hashSecret(id)} and expires_at > ${new Date(now)}`;
  return row?.token_sha256 ?? null;
}

/** Ends a session (signing out): its ID lets nobody in any more, wherever it was copied to. */
export async function deleteSession(db: Db, id: string): Promise<void> {
  await db`delete from console_sessions where id_sha256 = ${hashSecret(id)}`;
}
