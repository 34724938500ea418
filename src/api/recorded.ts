import type { Context } from 'hono';
import { identityOf } from '../auth/guard.ts';
import type { Reconcilers } from '../reconcilers/client.ts';
import { audited } from '../store/audit.ts';
import type { Db, Tx } from '../store/db.ts';
import { lockUntilCommit } from '../store/locks.ts';
import { getModel } from '../store/models.ts';

/** A change made through the API: what it is, the thing it changes, and whom to tell once it is made. */
export interface Change<T> {
  /** As the audit log names it: `model.put`, `quota.set`... */
  action: string;
  /** The changed thing as the audit log names it: `model:chat`, `team:k3n8c2p4xa`... */
  target: string;
  /** Finds the changed thing (never a secret), before and after the change. */
  read: (tx: Tx) => Promise<unknown>;
  /** Taken first: concurrent changes of the same thing wait for each other (see `audited`). */
  serialize?: (tx: Tx) => Promise<void>;
  apply: (tx: Tx) => Promise<T>;
  /** The reconcilers that decide on what changed, told once it is committed (none: no one is told). */
  tell?: { models: readonly string[] | (() => Promise<readonly string[]>); why: Why };
}

/**
 * Makes a change as the caller's token and records it in the audit log, in one transaction; then tells
 * the reconcilers it concerns. A change that throws is rolled back, recorded nowhere and told no one.
 */
export async function recordedChange<T>(
  c: Context,
  deps: { sql: Db; reconcilers: Reconcilers },
  change: Change<T>,
): Promise<T> {
  const { action, target, read, apply, serialize, tell } = change;
  const actor = identityOf(c).name;
  const result = await audited(deps.sql, { actor, action, target }, read, apply, serialize);
  if (tell)
    await deps.reconcilers.tell(
      typeof tell.models === 'function' ? await tell.models() : tell.models,
      tell.why,
    );
  return result;
}

type Why = Parameters<Reconcilers['tell']>[1];

/**
 * A change of one model: the audit log keeps the model before and after; its reconciler hears `why`.
 * Changes of one model name are made one at a time, so what each finds stored is still so when it writes.
 */
export const modelChange = (name: string, why: Why) => ({
  target: `model:${name}`,
  serialize: (tx: Tx) => lockUntilCommit(tx, 'modelChanges', name),
  read: (tx: Tx) => getModel(tx, name),
  tell: { models: [name], why },
});
