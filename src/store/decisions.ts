import type { Decision } from '../domain/decision.ts';
import { type Sql, transaction } from './db.ts';

export interface StoredDecision {
  at: string;
  action: string;
  reason: string;
  replica?: string;
  profile?: string;
  node?: string;
  inputs: Record<string, unknown>;
}

/** A preemption's victim as its decision's record names it: its owner, and its phrase (policy/explain.ts). */
export interface NamedVictim {
  owner: string | null;
  phrase: string;
}

/**
 * Stores a decision. With `skipIfUnchanged` (a pass that did nothing), not when the model's newest
 * decision also did nothing and waits for the same things (the codes of `pending`, compared as JSON):
 * the history keeps changes, not every figure.
 */
export async function recordDecision(
  sql: Sql,
  decision: Decision,
  replica?: string,
  skipIfUnchanged = false,
  victims?: readonly NamedVictim[],
) {
  const inputs = {
    ...decision.inputs,
    pending: decision.pending ?? null,
    rejected: decision.rejected,
    // A preemption's sentence names its victims: with their owners kept, reading can hide those of
    // scopes the reader does not see (api/decisions-shown.ts).
    ...(decision.action === 'preempt' && victims ? { victims } : {}),
  };
  await sql`
    insert into decisions (model, action, reason, replica, profile, node, inputs)
    select ${decision.model}, ${decision.action}, ${decision.reason}, ${replica ?? decision.replica ?? null},
      ${decision.profile ?? null}, ${decision.node ?? null}, ${sql.json(inputs as never)}
    where not ${skipIfUnchanged} or not exists (
      select 1 from (select action, inputs from decisions where model = ${decision.model} order by id desc limit 1) newest
      where newest.action = ${decision.action}
        and coalesce(newest.inputs->'pending', 'null') = ${sql.json({ pending: inputs.pending } as never)}->'pending')`;
}

/** A pass's decision (as recordDecision), then those of the places that followed it, in one transaction. */
export async function recordDecisions(
  sql: Sql,
  decision: Decision,
  replica: string | undefined,
  skipIfUnchanged: boolean,
  also: readonly { decision: Decision; replica: string }[],
  victims?: readonly NamedVictim[],
) {
  if (also.length === 0) return recordDecision(sql, decision, replica, skipIfUnchanged, victims);
  await transaction(sql, async (txn) => {
    const tx = txn as unknown as Sql;
    await recordDecision(tx, decision, replica, skipIfUnchanged, victims);
    for (const step of also) await recordDecision(tx, step.decision, step.replica);
  });
}

/** A note in a model's history that is not one of its own passes (e.g. "reclaimed for team:X"). */
export async function recordNote(
  sql: Sql,
  model: string,
  action: string,
  reason: string,
  about: { replica?: string; node?: string; inputs?: Record<string, unknown> } = {},
) {
  await sql`insert into decisions (model, action, reason, replica, node, inputs)
    values (${model}, ${action}, ${reason}, ${about.replica ?? null}, ${about.node ?? null},
      ${sql.json((about.inputs ?? {}) as never)})`;
}

export async function listDecisions(sql: Sql, model: string, limit: number): Promise<StoredDecision[]> {
  const rows = await sql<DecisionRow[]>`
    select at, action, reason, replica, profile, node, inputs from decisions
    where model = ${model} order by id desc limit ${limit}`;
  return rows.map(toStored);
}

/** A stored decision as its row holds it. */
export type DecisionRow = Omit<StoredDecision, 'at'> & { at: Date };

/** A decision row as the API answers it. */
export const toStored = (row: DecisionRow): StoredDecision => ({
  at: row.at.toISOString(),
  action: row.action,
  reason: row.reason,
  ...(row.replica ? { replica: row.replica } : {}),
  ...(row.profile ? { profile: row.profile } : {}),
  ...(row.node ? { node: row.node } : {}),
  inputs: row.inputs,
});

/** The newest decision of each of these models. */
export async function latestDecisions(sql: Sql, models: string[]): Promise<Map<string, StoredDecision>> {
  if (models.length === 0) return new Map();
  const rows = await sql<(DecisionRow & { model: string })[]>`
    select distinct on (model) model, at, action, reason, replica, profile, node, inputs from decisions
    where model in ${sql(models)} order by model, id desc`;
  return new Map(rows.map((row) => [row.model, toStored(row)]));
}

/** Models whose newest decision left them pending (they wait for room or a limit). */
export async function pendingModels(sql: Sql): Promise<string[]> {
  const rows = await sql<{ model: string }[]>`
    select m.name as model from models m
    cross join lateral (select inputs from decisions where model = m.name order by id desc limit 1) newest
    where newest.inputs->>'pending' is not null`;
  return rows.map((row) => row.model);
}
