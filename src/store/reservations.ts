import type { ClusterNode, Replica } from '../domain/cluster.ts';
import type { Decision, Victim } from '../domain/decision.ts';
import type { Measurement } from '../domain/model.ts';
import { scopeLabel } from '../domain/scope-names.ts';
import type { ModelMemory, PolicySettings } from '../domain/snapshot.ts';
import { BACKOFF_CAP_MS, backedOffUntil } from '../policy/backoff.ts';
import { burstRefusal, decideBurst } from '../policy/burst.ts';
import { PREEMPTED, preemptedNote, RECLAIMED, reclaimedNote } from '../policy/explain.ts';
import { startRefusal } from '../policy/reservation.ts';
import { buildView, type View } from '../policy/view.ts';
import { type Sql, transaction } from './db.ts';
import { recordNote } from './decisions.ts';
import { lockUntilCommit } from './locks.ts';
import { getReplica, listReplicas, recentOutcomes, transition } from './replicas.ts';
import { type LiveReading, readSnapshot, snapshotOnReading } from './snapshot.ts';

/**
 * reserved: what was reserved, when it is not the burst given (planned again under the lock), in the
 * order of the replica IDs (the first ones); refused: why, and what the model would do on the state
 * under the lock (nothing, and why not).
 */
export type Reservation =
  | { reserved: true; decisions?: Decision[] }
  | { reserved: false; why: string; decision?: Decision };

/**
 * Commits one pass's burst (policy/burst.ts: a place, reclaim or preempt, perhaps followed by more
 * places), one replica ID each, in one transaction: under the lock it re-reads the state, re-checks
 * limits, node room and claims (policy/reservation.ts), inserts the replicas as pending and marks the
 * victims draining. Idempotent: a first replica ID that exists means the burst is reserved already.
 * A burst the fresh state refuses (someone took its node or victim first) is planned again there, with
 * the model's memory (its profiles' backoff read then), up to as many replicas: a refusal then means
 * the model can do nothing now, not that it came second.
 */
export async function reserve(
  sql: Sql,
  planned: readonly Decision[],
  replicaIds: readonly string[],
  settings: PolicySettings,
  now: number,
  /** The worker's latest reading of the live state and its measurements: places are checked on them. */
  earlier?: { reading: LiveReading; measurements: Measurement[] },
) {
  return transaction(sql, async (txn): Promise<Reservation> => {
    const tx = txn as unknown as Sql;
    // Every reservation takes this lock, so each one sees the ones before it.
    await lockUntilCommit(txn, 'reservations');
    const existing = await tx<{ id: string }[]>`select id from replicas where id in ${tx(replicaIds)}`;
    if (existing.length > 0)
      return {
        reserved: true,
        ...(existing.length < planned.length && { decisions: planned.slice(0, existing.length) }),
      };
    // Places are checked, and planned again when refused (someone took the node first), on the worker's
    // reading brought up to date: a few rows, not the whole store. A reclaim, a preemption or nothing to
    // do is checked or planned on everything read now: its victims' states must be exact.
    const places = (burst: readonly Decision[]) => burst.every((decision) => decision.action === 'place');
    if (earlier && places(planned)) {
      const view = buildView(await snapshotOnReading(tx, earlier, now, settings));
      const on = await burstOn(tx, view, planned, replicaIds.length);
      if (on.allowed && places(on.burst)) return reserveBurst(tx, view, on.burst, planned, replicaIds);
    }
    const view = buildView(await readSnapshot(tx, now, settings));
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
  for (const [i, decision] of burst.entries()) await reserveOne(tx, view, decision, replicaIds[i]);
  return burst === planned ? { reserved: true } : { reserved: true, decisions: [...burst] };
}

/** Inserts the decision's replica as pending and marks its victims draining, each with a note. */
async function reserveOne(tx: Sql, view: View, decision: Decision, replicaId: string) {
  const profile = view.models.get(decision.model)!.profiles.find((p) => p.name === decision.profile)!;
  await tx`
    insert into replicas (id, model, profile, node, resources, state, reason)
    values (${replicaId}, ${decision.model}, ${profile.name}, ${decision.node!}, ${tx.json(profile.resources)},
      'pending', ${decision.reason})`;
  // The replica reserved for a preemption starts once its victims have stopped (admitStart).
  const preemptedFor = decision.action === 'preempt' ? decision.model : null;
  for (const victim of decision.victims ?? []) {
    const { reason, action, note } = victimNote(view, decision, victim);
    // Victims have started (a pending replica is never one: policy/reclaim.ts mayReclaim, preempt.ts).
    // Each keeps the replica reserved in its place: their room counts once (policy/holdings.ts).
    await tx`update replicas
      set state = 'draining', reason = ${reason}, preempted_for = ${preemptedFor},
        reclaimed_for = ${replicaId}, updated_at = now()
      where id = ${victim.replica} and state in ('starting', 'ready')`;
    await recordNote(tx, victim.model, action, note, {
      replica: victim.replica,
      node: victim.node,
      // Who took it, kept apart from the sentence: a reader who may not see that model is not told it.
      inputs: {
        for_scope: decision.reclaim_for ?? null,
        for_model: decision.model,
        for_owner: view.models.get(decision.model)!.owner,
      },
    });
  }
}

/** The model's memory as its plan left it, with its profiles' backoff as the store has it now. */
async function memoryOf(tx: Sql, planned: Decision): Promise<ModelMemory> {
  const outcomes = await recentOutcomes(tx, planned.model, BACKOFF_CAP_MS * 2);
  return { scaleDownSince: planned.memory.scaleDownSince, backedOffUntil: backedOffUntil(outcomes) };
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

export type StartAdmission = { admitted: true; replica: Replica } | { admitted: false; why: string };

/**
 * Lets a reserved replica start when what runs on its node and what was reserved there before it fit
 * (policy/reservation.ts), and marks it starting, in one transaction that holds the node's row lock:
 * two starts on a node never both see the same room. A replica already starting is admitted again,
 * so a retried activity hands it to the driver once more; not yet is a normal answer.
 */
export async function admitStart(sql: Sql, replicaId: string): Promise<StartAdmission> {
  return transaction(sql, async (tx): Promise<StartAdmission> => {
    const [row] = await tx<{ node: string }[]>`select node from replicas where id = ${replicaId}`;
    if (!row) return { admitted: false, why: `there is no replica ${replicaId}` };
    const [node] = await tx<ClusterNode[]>`
      select name, capacity, gpu_model, labels, state from nodes where name = ${row.node} for update`;
    if (!node) return { admitted: false, why: `node ${row.node} is gone` };
    const replica = (await getReplica(tx, replicaId))!;
    if (replica.state === 'starting') return { admitted: true, replica };
    if (replica.state !== 'pending')
      return { admitted: false, why: `replica ${replicaId} is ${replica.state}` };
    const onNode = await listReplicas(tx, { node: node.name, activeOnly: true, inReservationOrder: true });
    // The replicas draining for the model, and for this replica, read through their indexes (migrations
    // 008, 018): startRefusal counts them.
    const drainingFor = [
      ...(await listReplicas(tx, { state: 'draining', preemptedFor: replica.model })),
      ...(await listReplicas(tx, { state: 'draining', reclaimedFor: replicaId })),
    ];
    const why = startRefusal(node, onNode, replicaId, drainingFor);
    if (why) return { admitted: false, why };
    await transition(tx, replicaId, ['pending'], 'starting');
    return { admitted: true, replica: { ...replica, state: 'starting' } };
  });
}
