/** A bounded class of why a model is pending: a label value, unlike the sentence it comes from. */
export type PendingReason =
  | 'no_room'
  | 'limit'
  | 'max_replicas'
  | 'backoff'
  | 'unmeasured'
  | 'slo_unmet'
  | 'no_profile'
  | 'other';

// The phrases policy/decide.ts and policy/choose-profile.ts build pending sentences from;
// test/unit/metrics-pending-reason.test.ts checks them against real decisions.
const PHRASES: [RegExp, PendingReason][] = [
  [/\bno room for\b/, 'no_room'],
  [/\ba limit of\b/, 'limit'],
  [/^max_replicas\b/, 'max_replicas'],
  [/\bis backed off\b/, 'backoff'],
  [/\bis not measured\b/, 'unmeasured'],
  [/\bcannot meet its SLO\b/, 'slo_unmet'],
  [/\bhas no profile\b/, 'no_profile'],
];

/**
 * The classes a pending sentence names. One sentence may name several ("no room for a (needs 4 GPUs)
 * and a limit of org Beta stops b"): the model waits on each of them.
 */
export function pendingReasons(pending: string): PendingReason[] {
  const reasons = PHRASES.filter(([phrase]) => phrase.test(pending)).map(([, reason]) => reason);
  return reasons.length > 0 ? reasons : ['other'];
}
