import type { Context } from 'hono';
import type { ScopeKey } from '../domain/scope.ts';
import { RECLAIMED, reclaimedNote } from '../policy/explain.ts';
import type { StoredDecision } from '../store/decisions.ts';
import { visibility } from './auth/guard.ts';

/**
 * Decisions as the caller may read them: the note of a replica reclaimed for a model the caller does
 * not see names neither that model nor its scope. Done on reading, so that an admin still sees both.
 */
export async function decisionsShown(c: Context): Promise<(decision: StoredDecision) => StoredDecision> {
  const shown = await visibility(c);
  return (decision) => {
    // A note written before the reclaimer was kept apart has no owner: only who sees everything reads it.
    const reclaimer = (decision.inputs.for_owner ?? null) as ScopeKey | null;
    if (decision.action !== RECLAIMED || shown(reclaimer)) return decision;
    const reason = reclaimedNote(
      'another scope',
      decision.replica!,
      decision.node ?? 'its node',
      'another model',
    );
    return { ...decision, reason, inputs: {} };
  };
}
