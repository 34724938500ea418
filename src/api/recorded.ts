import type { Context } from 'hono';
import { audited } from '../store/audit.ts';
import type { Db, Tx } from '../store/db.ts';
import { identityOf } from './auth/guard.ts';

/**
 * Makes a change as the caller's token and records it in the audit log, in one transaction: `read`
 * finds the changed thing before and after. A change that throws is rolled back and recorded nowhere.
 */
export function recorded<T>(
  c: Context,
  db: Db,
  action: string,
  target: string,
  read: (tx: Tx) => Promise<unknown>,
  change: (tx: Tx) => Promise<T>,
): Promise<T> {
  return audited(db, { actor: identityOf(c).name, action, target }, read, change);
}
