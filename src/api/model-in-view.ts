import type { Context } from 'hono';
import { authorize, identityOf } from '../auth/guard.ts';
import { type Action, may, sees } from '../contracts/permissions.ts';
import type { Db } from '../store/db.ts';
import { getModel, noSuchModel, type StoredModel } from '../store/models.ts';

/**
 * The model named, when the caller may know of it: it sees the model's owner, or it may do `action` to
 * the model (a reporter reads nothing, yet reports for its models). Otherwise undefined, exactly as for
 * a model that does not exist, so that no answer tells a foreign model from a missing one.
 */
export async function modelInView(
  c: Context,
  sql: Db,
  name: string,
  action: Action = 'read',
): Promise<StoredModel | undefined> {
  const model = await getModel(sql, name);
  if (!model) return undefined;
  const who = identityOf(c);
  // Only a token bound to a scope is decided by the chain: spare the others (every load report) the read.
  const chain = who.scope === null ? [] : (await c.get('scopeTree')()).chain(model.owner);
  return sees(who, chain) || may(who, action, { chain, model: name }).allowed ? model : undefined;
}

/** The model named, as modelInView finds it, or 404 `there is no model "..."`. */
export async function existingModelInView(
  c: Context,
  sql: Db,
  name: string,
  action?: Action,
): Promise<StoredModel> {
  const model = await modelInView(c, sql, name, action);
  if (!model) throw noSuchModel(name);
  return model;
}

/**
 * The model named, when the caller may change it: 404 as existingModelInView, 403 unless its owner is
 * the caller's to manage. Called in the change's transaction, after its lock (api/recorded.ts
 * modelChange), it is still so when the change is written.
 */
export async function modelToChange(c: Context, sql: Db, name: string): Promise<StoredModel> {
  const model = await existingModelInView(c, sql, name, 'change-model');
  await authorize(c, 'change-model', { scope: model.owner, model: name });
  return model;
}
