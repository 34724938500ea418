import type { Decision, Victim } from '../domain/decision.ts';
import { scopeLabel } from '../domain/scope-names.ts';
import { PREEMPTED, preemptedNote, RECLAIMED, reclaimedNote } from '../policy/explain.ts';
import type { View } from '../policy/view.ts';
import type { Sql } from '../store/db.ts';
import { drainVictim } from '../store/reservations.ts';

/**
 * Marks the decision's victims draining in the place of the replica reserved for it, each with a note
 * in its model's history. The replica reserved for a preemption starts once its victims have stopped
 * (placement/admit-start.ts); victims have started (policy/reclaim.ts mayReclaim, preempt.ts), and
 * each keeps the replica reserved in its place: their room counts once (policy/holdings.ts).
 */
export async function drainVictims(tx: Sql, view: View, decision: Decision, replicaId: string) {
  for (const victim of decision.victims ?? []) {
    await drainVictim(tx, victim, {
      ...victimNote(view, decision, victim),
      preemptedFor: decision.action === 'preempt' ? decision.model : null,
      reclaimedFor: replicaId,
      // Who took it, kept apart from the sentence: a reader who may not see that model is not told it.
      inputs: {
        for_scope: decision.reclaim_for ?? null,
        for_model: decision.model,
        for_owner: view.models.get(decision.model)!.owner,
      },
    });
  }
}

/** Why a victim drains, on its row and in the note its model's history keeps. */
function victimNote(view: View, decision: Decision, victim: Victim) {
  if (decision.action === 'preempt') {
    const note = preemptedNote(decision.model, decision.claim, victim);
    return { reason: note, action: PREEMPTED, note };
  }
  const forScope = `${scopeLabel(view.scopes, decision.reclaim_for!)} (${decision.reclaim_for})`;
  return {
    reason: `reclaimed for ${forScope}`,
    action: RECLAIMED,
    note: reclaimedNote(forScope, victim.replica, victim.node, decision.model),
  };
}
