import type { Context } from 'hono';
import type { ScopeKey } from '../domain/scope.ts';
import { PREEMPTED, preemptedNote, RECLAIMED, reclaimedNote } from '../policy/explain.ts';
import type { StoredDecision } from '../store/decisions.ts';
import { visibility } from './auth/guard.ts';

/**
 * Decisions as the caller may read them: the note of a replica reclaimed or preempted for a model the
 * caller does not see names neither that model nor its scope. Done on reading, so that an admin still
 * sees both.
 */
export async function decisionsShown(c: Context): Promise<(decision: StoredDecision) => StoredDecision> {
  const shown = await visibility(c);
  return (decision) => {
    // A note written before the taker was kept apart has no owner: only who sees everything reads it.
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
