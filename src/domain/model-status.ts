/**
 * A model's status as the list, the search attributes and the reconciler's query show it:
 * - new: no decision yet;
 * - pending: its newest decision waits for something (room, a limit, max_replicas...);
 * - steady: its newest decision had nothing to do;
 * - scaling: its newest decision placed, reclaimed, preempted or removed a replica;
 * - deleting: it was deleted and its replicas drain.
 */
export type ModelStatus = 'new' | 'pending' | 'steady' | 'scaling' | 'deleting';

/**
 * The one rule for it. It lives in domain, not policy, because the workflow sandbox computes it too and
 * imports nothing beyond domain. `pending` is any stored form: codes, or the sentence of an older decision.
 */
export function modelStatus(
  deleting: boolean,
  newest: { action: string; pending?: unknown } | null,
): ModelStatus {
  if (deleting) return 'deleting';
  if (!newest) return 'new';
  if (newest.pending) return 'pending';
  return newest.action === 'none' ? 'steady' : 'scaling';
}
