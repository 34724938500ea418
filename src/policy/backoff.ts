import type { ReplicaState } from '../domain/cluster.ts';
import { type Snapshot, START_OUTCOMES_WINDOW_MS, type StartOutcome } from '../domain/snapshot.ts';

export const BACKOFF_FIRST_MS = 5_000;
/** Half the window start outcomes are read in, so that every failure still backing a profile off is read. */
export const BACKOFF_CAP_MS = START_OUTCOMES_WINDOW_MS / 2;

/** Neither a failure nor a success yet: a replica on its way. */
const UNDECIDED: readonly ReplicaState[] = ['pending', 'starting'];

/**
 * Profiles backed off after failed starts or crashes: profile -> until when. Failed starts and crashes
 * (engines that ended after serving) are counted each on their own, from the profile's newest replica
 * that neither failed to start (for the first) nor crashed (for the second): a replica that started ends
 * a run of failed starts, and one that serves or stopped ends a run of crashes. The wait doubles with
 * each in the run (5 s, 10 s, ...) up to 5 minutes after its newest; the later of the two holds.
 * Computed from the replicas' own history, so it survives any restart.
 */
export function backedOffUntil(outcomes: readonly StartOutcome[]): Record<string, number> {
  const byProfile = new Map<string, StartOutcome[]>();
  for (const outcome of outcomes)
    byProfile.set(outcome.profile, [...(byProfile.get(outcome.profile) ?? []), outcome]);
  const until: Record<string, number> = {};
  for (const [profile, list] of byProfile) {
    const newestFirst = [...list].sort((a, b) => b.at - a.at);
    // A crash is a start that worked; a failed start is not a crash, and does not end a run of them.
    const ends = [
      runEnd(newestFirst, 'failed', UNDECIDED),
      runEnd(newestFirst, 'crashed', [...UNDECIDED, 'failed']),
    ].filter((end): end is number => end !== undefined);
    if (ends.length > 0) until[profile] = Math.max(...ends);
  }
  return until;
}

/** When a run of `counted` outcomes (newest first, `passed` ones skipped) stops backing off. */
function runEnd(
  newestFirst: readonly StartOutcome[],
  counted: ReplicaState,
  passed: readonly ReplicaState[],
): number | undefined {
  const runLength = newestFirst.findIndex((o) => o.state !== counted && !passed.includes(o.state));
  const run = newestFirst
    .slice(0, runLength < 0 ? newestFirst.length : runLength)
    .filter((o) => o.state === counted);
  if (run.length === 0) return undefined;
  return run[0].at + Math.min(BACKOFF_CAP_MS, BACKOFF_FIRST_MS * 2 ** (run.length - 1));
}

/**
 * The profiles of `model` still backed off at the snapshot's time, from the start outcomes its reading
 * carries (Snapshot.startOutcomes): what the other models see of it.
 */
export function backedOffOf(snapshot: Snapshot, model: string): Record<string, number> {
  const until = backedOffUntil(snapshot.startOutcomes?.[model] ?? []);
  return Object.fromEntries(Object.entries(until).filter(([, end]) => end > snapshot.now));
}
