import type { Decision } from '../domain/decision.ts';
import type { Measurement } from '../domain/model.ts';
import { EMPTY_MEMORY, type ModelMemory, memoryAfter, type PolicySettings } from '../domain/snapshot.ts';
import { BACKOFF_CAP_MS, backedOffUntil } from '../policy/backoff.ts';
import { burstRefusal, decideBurst } from '../policy/burst.ts';
import { buildView, type View, viewAt } from '../policy/view.ts';
import type { Sql } from '../store/db.ts';
import { recentOutcomes } from '../store/replicas.ts';
import { countExisting, insertPending, underReservationLock } from '../store/reservations.ts';
import { type LiveReading, readSnapshot, snapshotOnReading, unchangedSince } from '../store/snapshot.ts';
import { drainVictims } from './victims.ts';

/**
 * reserved: what was reserved, when it is not the burst given (planned again under the lock), in the
 * order of the replica IDs (the first ones); refused: why, and what the model would do on the state
 * under the lock (nothing, and why not).
 */
export type Reservation =
  | { reserved: true; decisions?: Decision[] }
  | { reserved: false; why: string; decision?: Decision };

/** The worker's latest reading of the live state, its measurements, and the view its pass planned on. */
export interface Earlier {
  reading: LiveReading;
  measurements: Measurement[];
  /** The view built on that reading: checked on again when nothing it holds changed since. */
  view?: View;
}

/**
 * Commits one pass's burst (policy/burst.ts: a place, reclaim or preempt, perhaps followed by more
 * places), one replica ID each, in one transaction under the store's reservation lock: it re-reads the
 * state, re-checks limits, node room and claims (policy/reservation.ts), inserts the replicas as
 * pending and marks the victims draining. Idempotent: a first replica ID that exists means the burst is
 * reserved already. A burst the fresh state refuses (someone took its node or victim first) is planned
 * again there, with the model's memory (its profiles' backoff read then), up to as many replicas: a
 * refusal then means the model can do nothing now, not that it came second.
 *
 * The store holds the lock and runs the SQL; what is reserved is decided here, with the policy.
 * `build` builds a view (policy/view.ts buildView; tests count its calls).
 */
export function reserve(
  sql: Sql,
  planned: readonly Decision[],
  replicaIds: readonly string[],
  settings: PolicySettings,
  now: number,
  earlier?: Earlier,
  build: typeof buildView = buildView,
): Promise<Reservation> {
  return underReservationLock(sql, async (tx): Promise<Reservation> => {
    const existing = await countExisting(tx, replicaIds);
    if (existing > 0)
      return { reserved: true, ...(existing < planned.length && { decisions: planned.slice(0, existing) }) };
    // Places are checked, and planned again when refused (someone took the node first), on the worker's
    // reading brought up to date: a few rows, not the whole store. When nothing it holds changed since,
    // that is the view the pass planned on, at this time: no view is built again. A reclaim, a
    // preemption or nothing to do is checked or planned on everything read now: its victims' states
    // must be exact.
    const places = (burst: readonly Decision[]) => burst.every((decision) => decision.action === 'place');
    if (earlier && places(planned)) {
      const snapshot = await snapshotOnReading(tx, earlier, now, settings);
      const view =
        earlier.view && unchangedSince(earlier.view.snapshot, snapshot)
          ? viewAt(earlier.view, now)
          : build(snapshot);
      const on = await burstOn(tx, view, planned, replicaIds.length);
      if (on.allowed && places(on.burst)) return reserveBurst(tx, view, on.burst, planned, replicaIds);
    }
    const view = build(await readSnapshot(tx, now, settings));
    const on = await burstOn(tx, view, planned, replicaIds.length);
    if (!on.allowed) {
      const [first] = on.burst;
      return { reserved: false, why: on.why!, ...(first.action === 'none' && { decision: first }) };
    }
    return reserveBurst(tx, view, on.burst, planned, replicaIds);
  });
}

/**
 * The burst to reserve on `view`: the planned one when the view allows it, else what the model plans
 * there (with its memory, its profiles' backoff read now), and whether the view allows that; `why` the
 * planned one was refused.
 */
async function burstOn(tx: Sql, view: View, planned: readonly Decision[], most: number) {
  const why = burstRefusal(view, planned);
  if (!why) return { burst: planned, why, allowed: true };
  const burst = decideBurst(view, planned[0].model, await memoryOf(tx, planned[0]), most);
  return { burst, why, allowed: !burstRefusal(view, burst) };
}

/** Reserves the burst, one replica ID each, and says what was reserved when it is not what was planned. */
async function reserveBurst(
  tx: Sql,
  view: View,
  burst: readonly Decision[],
  planned: readonly Decision[],
  replicaIds: readonly string[],
): Promise<Reservation> {
  for (const [i, decision] of burst.entries()) {
    const profile = view.models.get(decision.model)!.profiles.find((p) => p.name === decision.profile)!;
    await insertPending(tx, {
      id: replicaIds[i],
      model: decision.model,
      profile: profile.name,
      node: decision.node!,
      resources: profile.resources,
      reason: decision.reason,
    });
    await drainVictims(tx, view, decision, replicaIds[i]);
  }
  return burst === planned ? { reserved: true } : { reserved: true, decisions: [...burst] };
}

/**
 * The model's memory as its plan left it (its scale-down window and its learned load growth, which a
 * burst's spare places are planned on), with its profiles' backoff as the store has it now.
 */
async function memoryOf(tx: Sql, planned: Decision): Promise<ModelMemory> {
  const outcomes = await recentOutcomes(tx, planned.model, BACKOFF_CAP_MS * 2);
  return memoryAfter(EMPTY_MEMORY, planned.memory, backedOffUntil(outcomes));
}
