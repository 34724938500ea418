import type { JSONValue } from 'postgres';
import { type Db, type Tx, transaction } from './db.ts';

/** One change: who made it, what it was, and the thing before and after it (null: absent). */
export interface AuditEntry {
  id: number;
  at: string;
  actor: string;
  action: string;
  target: string;
  before: unknown;
  after: unknown;
}

type AuditRow = Omit<AuditEntry, 'id' | 'at'> & { id: string; at: Date };

/**
 * Makes a change and records it in the same transaction, so the log never tells of a change that did
 * not happen nor misses one that did. `read` finds the changed thing (never a secret), before and after.
 * `serialize`, when given, runs first and makes concurrent changes of one thing wait for each other, so
 * that `before` is exactly what the change found; without it, `before` is what was committed when the
 * change began.
 */
export async function audited<T>(
  db: Db,
  what: { actor: string; action: string; target: string },
  read: (tx: Tx) => Promise<unknown>,
  change: (tx: Tx) => Promise<T>,
  serialize?: (tx: Tx) => Promise<void>,
): Promise<T> {
  return transaction(db, async (tx) => {
    await serialize?.(tx);
    const before = await read(tx);
    const result = await change(tx);
    const after = await read(tx);
    const json = (value: unknown) => (value == null ? null : tx.json(value as JSONValue));
    await tx`
      insert into audit_log (actor, action, target, before, after)
      values (${what.actor}, ${what.action}, ${what.target}, ${json(before)}, ${json(after)})`;
    return result;
  });
}

/** The newest changes first. */
export async function listAudit(db: Db, limit: number): Promise<AuditEntry[]> {
  const rows = await db<AuditRow[]>`
    select id, at, actor, action, target, before, after from audit_log order by id desc limit ${limit}`;
  return rows.map((row) => ({ ...row, id: Number(row.id), at: row.at.toISOString() }));
}

/** Records what changed nothing but must be told (a use of an expired token): `detail` is its `after`. */
export async function recordEvent(
  db: Db,
  what: { actor: string; action: string; target: string },
  detail: JSONValue,
): Promise<void> {
  await db`
    insert into audit_log (actor, action, target, before, after)
    values (${what.actor}, ${what.action}, ${what.target}, null, ${db.json(detail)})`;
}
