import type { Context } from 'hono';
import { visibility } from '../auth/guard.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { PREEMPTED, preemptedNote, RECLAIMED, reclaimedNote } from '../policy/explain.ts';
import type { StoredDecision } from '../store/decisions.ts';

/** What a preemption's sentence says of a victim whose model the reader does not see. */
export const FOREIGN_VICTIM = 'a replica of another model';

/**
 * Decisions as the caller may read them: the note of a replica reclaimed or preempted for a model the
 * caller does not see names neither that model nor its scope, and a preemption names a victim of a
 * model the caller does not see as "a replica of another model" (neither its replica, its model nor
 * its claim). Done on reading, so that an admin still sees all.
 */
export async function decisionsShown(c: Context): Promise<(decision: StoredDecision) => StoredDecision> {
  const shown = await visibility(c);
  return (decision) => {
    // A note written before the taker was kept apart has no owner: only who sees everything reads it.
    if (decision.action === 'preempt') return withVictimsShown(decision, shown);
    const taker = (decision.inputs.for_owner ?? null) as ScopeKey | null;
    if ((decision.action !== RECLAIMED && decision.action !== PREEMPTED) || shown(taker)) return decision;
    const node = decision.node ?? 'its node';
    const reason =
      decision.action === RECLAIMED
        ? reclaimedNote('another scope', decision.replica!, node, 'another model')
        : preemptedNote('another model', undefined, { replica: decision.replica!, node });
    return { ...decision, reason, inputs: {} };
  };
}

/** A preemption's decision with the victims of models the reader does not see told as another model's. */
function withVictimsShown(
  decision: StoredDecision,
  shown: (scope: ScopeKey | null) => boolean,
): StoredDecision {
  const victims = (decision.inputs.victims ?? []) as { owner: ScopeKey | null; phrase: string }[];
  const foreign = victims.filter((v) => !shown(v.owner));
  if (foreign.length === 0) return decision;
  let reason = decision.reason;
  for (const victim of foreign) reason = reason.replace(victim.phrase, FOREIGN_VICTIM);
  return {
    ...decision,
    reason,
    inputs: { ...decision.inputs, victims: victims.filter((v) => shown(v.owner)) },
  };
}
