import type { ReplicaState } from '../domain/cluster.ts';

export const BACKOFF_FIRST_MS = 5_000;
export const BACKOFF_CAP_MS = 300_000;

export interface StartOutcome {
  profile: string;
  state: ReplicaState;
  /** When the replica last changed state (ms since epoch). */
  at: number;
}

/**
 * Profiles backed off after failed starts: profile -> until when. A profile's failures count from its
 * newest replica that did not fail; the wait doubles with each (5 s, 10 s, ...) up to 5 minutes after
 * the newest failure. Computed from the replicas' own history, so it survives any restart.
 */
export function backedOffUntil(outcomes: readonly StartOutcome[]): Record<string, number> {
  const byProfile = new Map<string, StartOutcome[]>();
  for (const outcome of outcomes)
    byProfile.set(outcome.profile, [...(byProfile.get(outcome.profile) ?? []), outcome]);
  const until: Record<string, number> = {};
  for (const [profile, list] of byProfile) {
    const newestFirst = [...list].sort((a, b) => b.at - a.at);
    const firstSuccess = newestFirst.findIndex(
      (o) => o.state !== 'failed' && o.state !== 'pending' && o.state !== 'starting',
    );
    const failures = newestFirst
      .slice(0, firstSuccess < 0 ? newestFirst.length : firstSuccess)
      .filter((o) => o.state === 'failed');
    if (failures.length === 0) continue;
    until[profile] = failures[0].at + Math.min(BACKOFF_CAP_MS, BACKOFF_FIRST_MS * 2 ** (failures.length - 1));
  }
  return until;
}
