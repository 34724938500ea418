import type { Load } from '../domain/model.ts';
import type { PolicySettings } from '../domain/snapshot.ts';
import type { View } from './view.ts';

/** L for a model, or why it is unknown (never reported, or older than the staleness bound). */
export type LoadReading =
  | { inFlight: number; waiting: number; waitingSince?: number; why?: undefined }
  | { inFlight: null; waiting?: undefined; waitingSince?: undefined; why: string };

/**
 * Requests in flight (running + waiting), and the waiting ones apart, from the latest reports, when
 * they are fresh enough to act on.
 */
export function loadOf(view: View, model: string): LoadReading {
  return loadReading(view.snapshot.load[model], view.now, view.settings);
}

/** loadOf on a model's load record alone, read at `now`. */
export function loadReading(
  load: Load | undefined,
  now: number,
  settings: Pick<PolicySettings, 'loadStaleMs'>,
): LoadReading {
  if (!load) return { inFlight: null, why: 'load never reported' };
  const age = now - load.reported_at;
  if (age > settings.loadStaleMs) {
    return { inFlight: null, why: `load unknown (last report ${Math.round(age / 1000)} s ago)` };
  }
  return {
    inFlight: load.in_flight + load.waiting,
    waiting: load.waiting,
    ...(load.waiting_since !== undefined && { waitingSince: load.waiting_since }),
  };
}
