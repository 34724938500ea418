import {
  allHandlersFinished,
  condition,
  continueAsNew,
  deprecatePatch,
  getExternalWorkflowHandle,
  log,
  proxyActivities,
  proxyLocalActivities,
  setCurrentDetails,
  setHandler,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities, Reserved } from '../activities/types.ts';
import { type Decision, RESERVING_ACTIONS } from '../domain/decision.ts';
import { modelStatus } from '../domain/model-status.ts';
import { RESYNC_SPREAD } from '../domain/resync.ts';
import { EMPTY_MEMORY, type ModelMemory, memoryAfter } from '../domain/snapshot.ts';
import {
  deletedSignal,
  type ReconcilerView,
  reclaimedSignal,
  reconcilerId,
  stateQuery,
  WAKE_SIGNALS,
  wakeSignals,
} from './messages.ts';
import { LlmgwModel, LlmgwOwner, LlmgwOwnerPath, LlmgwReplicas, LlmgwStatus } from './search-attributes.ts';

// Store and driver failures are retried with backoff; bad input is marked non-retryable by the activities.
const ACTIVITY_OPTIONS = {
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '30 seconds' },
} as const;
const act = proxyActivities<Activities>(ACTIVITY_OPTIONS);
// Planning only reads: it runs in the workflow task that asks for it, so an idle pass is one task, not two.
const local = proxyLocalActivities<Activities>(ACTIVITY_OPTIONS);

/** Bounds on one run's history; signals count too (continueAsNewSuggested ignores them). */
export const RUN_BOUNDS = { passes: 100, signals: 2_000 };
/** Refused reservations in a row before waiting for the next wake-up instead of re-planning at once. */
const MAX_REPLANS = 3;
// Patches being retired (docs/architecture.md "Retiring history compatibility"): each was patched() while
// runs begun before it could be open, and is now deprecatePatch(): every open run began after it, so
// the code before it is gone; the marker is still written, so a worker of the previous code replays
// runs begun here. The calls go once no open run began under code that called patched(). The four
// reads marked EARLIER_SHAPE go with them: results the code before one shape recorded (runs open when
// it is deployed replay them) omit fields the activities now always return.
/** Passes plan in a local activity and leave out what changes nothing (a decision recorded again, the same search attributes). */
const LIGHT_PASSES = 'light-passes';
/**
 * Passes also reserve, start, drain and record in local activities: a pass is one or two workflow tasks
 * instead of a round trip through the server for each step (bench/scale). Each step is idempotent, so a
 * task retried elsewhere after a crash runs again what it had not recorded.
 */
const LOCAL_STEPS = 'local-steps';
/** New replicas are named `r-<16 hex>` (replicaId). */
const OPAQUE_REPLICA_IDS = 'opaque-replica-ids';

export interface ReconcileInput {
  model: string;
  memory?: ModelMemory;
  lastDecision?: ReconcilerView['lastDecision'];
  deleting?: boolean;
  /** When to continue as new (tests lower them). */
  bounds?: typeof RUN_BOUNDS;
}

/** What the reconciler knows between passes: small, and carried across continue-as-new. */
class ReconcilerState {
  dirty = true;
  deleting: boolean;
  memory: ModelMemory;
  lastDecision: ReconcilerView['lastDecision'];
  notes: string[] = [];
  passes = 0;
  signals = 0;
  status = 'starting';
  resyncMs = 30_000;
  /** Workflow time of the newest quota or measurement change: the worker's policy cache must be newer. */
  policyChangedAt = 0;
  /** Workflow time at the end of the last pass: a resync's view of the store must be newer. */
  passedAt = 0;
  /**
   * The worker's time just after the last reservation committed: the next pass's view must be newer. In
   * one workflow task (local steps) the workflow's clock stands still, so its own time cannot say that.
   */
  reservedAt = 0;
  /** The search attributes last set, as one key (they are set again only when it changes). */
  attributes = '';

  constructor(readonly input: ReconcileInput) {
    this.memory = input.memory ?? EMPTY_MEMORY;
    this.lastDecision = input.lastDecision ?? null;
    this.deleting = input.deleting ?? false;
  }

  wake(note?: string) {
    this.dirty = true;
    this.signals++;
    if (note) this.notes = [...this.notes.slice(-9), note];
  }

  view(): ReconcilerView {
    return {
      model: this.input.model,
      status: this.status,
      passes: this.passes,
      lastDecision: this.lastDecision,
      pendingReason: this.lastDecision?.pending ?? null,
      notes: this.notes,
    };
  }

  carry(): ReconcileInput {
    return {
      ...this.input,
      memory: this.memory,
      lastDecision: this.lastDecision,
      deleting: this.deleting,
    };
  }
}

/**
 * Keeps one model at the replicas its load needs. The loop only waits and dispatches: each pass plans in an
 * activity (rules live in src/policy), then reserves, starts, reclaims or drains through activities.
 */
export async function reconcileModel(input: ReconcileInput): Promise<void> {
  const state = new ReconcilerState(input);
  for (const name of WAKE_SIGNALS) {
    setHandler(wakeSignals[name], () => {
      // The worker's cached quota policy (scopes, quotas, measurements) must be newer than these changes:
      // an owner or spec change may name a scope created since the cache was read.
      if (name !== 'loadChanged' && name !== 'replicaChanged') state.policyChangedAt = Date.now();
      state.wake();
    });
  }
  setHandler(reclaimedSignal, (why: string) => state.wake(why));
  setHandler(deletedSignal, () => {
    state.deleting = true;
    state.wake('deleted');
  });
  setHandler(stateQuery, () => state.view());

  upsertSearchAttributes([{ key: LlmgwModel, value: input.model }]);
  let replans = 0;
  for (;;) {
    const spread = 1 - RESYNC_SPREAD + 2 * RESYNC_SPREAD * Math.random(); // deterministic in a workflow
    const woken = await condition(() => state.dirty, state.resyncMs * spread);
    state.dirty = false;
    state.passes++;
    if (state.deleting) {
      if (await act.drainModel({ model: input.model })) return;
      state.status = modelStatus(true, state.lastDecision);
      continue;
    }
    // Woken by a change, a pass needs the store as it is now; a resync, as it was since the last pass.
    const outcome = await pass(
      state,
      woken
        ? { freshAfter: Math.max(Date.now(), state.reservedAt) }
        : { freshAfter: Math.max(state.passedAt, state.reservedAt), resync: true },
    );
    state.passedAt = Date.now();
    if (outcome === 'gone') return; // the model no longer exists: nothing left to reconcile
    const refused = outcome === 'refused';
    replans = refused ? replans + 1 : 0;
    if (refused && replans <= MAX_REPLANS) state.dirty = true;

    const info = workflowInfo();
    if (
      info.continueAsNewSuggested ||
      state.passes >= (input.bounds ?? RUN_BOUNDS).passes ||
      state.signals >= (input.bounds ?? RUN_BOUNDS).signals
    ) {
      await condition(allHandlersFinished);
      await continueAsNew<typeof reconcileModel>(state.carry());
    }
  }
}

/** One pass: plan, act, record. 'refused': a reservation was refused (re-plan); 'gone': no such model. */
async function pass(
  state: ReconcilerState,
  how: { freshAfter: number; resync?: boolean },
): Promise<'done' | 'refused' | 'gone'> {
  const model = state.input.model;
  deprecatePatch(LIGHT_PASSES);
  const plan = await local.planPass({
    model,
    memory: state.memory,
    policyChangedAt: state.policyChangedAt,
    freshAfter: how.freshAfter,
  });
  if (!plan.exists) return 'gone';
  if (plan.deleting) {
    state.deleting = true;
    state.dirty = true;
    return 'done';
  }
  state.resyncMs = plan.resyncMs;
  deprecatePatch(LOCAL_STEPS);
  const steps = local;
  for (const replicaId of plan.startable) await steps.startReplica({ replicaId });

  let decision: Decision = plan.decision;
  state.memory = memoryAfter(state.memory, decision.memory, plan.backedOffUntil);
  let replica: string | undefined;
  let also: Reserved[] = [];
  let refused = false;
  if (RESERVING_ACTIONS.includes(decision.action)) {
    replica = replicaId();
    // EARLIER_SHAPE: the plan of the code before one shape omitted an empty alsoPlace.
    const planned = (plan.alsoPlace ?? []).map((next) => ({ decision: next, replicaId: replicaId() }));
    const reservation = await steps.reserveReplica({
      decision,
      replicaId: replica,
      ...(planned.length > 0 && { also: planned }),
    });
    if (reservation.reserved) {
      // Planned again under the lock: what was reserved is what happens and is recorded.
      // EARLIER_SHAPE: the reservation of the code before one shape omitted a decision it did not
      // change, and `also` when none was given.
      decision = reservation.decision ?? decision;
      state.reservedAt = reservation.at;
      also = reservation.also ?? [];
      if (decision.action === 'place') {
        const ids = [replica, ...also.map((step) => step.replicaId)];
        await Promise.all(ids.map((id) => steps.startReplica({ replicaId: id })));
      } else await tellVictims(decision);
      if (reservation.lookAgain) state.dirty = true;
    } else {
      refused = true;
      decision = reservation.decision;
      replica = undefined;
    }
  } else if (decision.action === 'remove' && decision.replica) {
    // A bursty model may shed several in one pass: one drain for all of them. EARLIER_SHAPE: the plan of
    // the code before one shape omitted an empty alsoRemove.
    const replicaIds = [decision.replica, ...(plan.alsoRemove ?? [])];
    await steps.drainReplicas({ replicaIds, reason: decision.reason });
  }
  // A resync that again did nothing for the same reason to wait (if any) has nothing to record: the
  // store would skip it too (nothing else records for the model without waking its reconciler).
  const again =
    how.resync &&
    decision.action === 'none' &&
    state.lastDecision?.action === 'none' &&
    JSON.stringify(state.lastDecision.pending) === JSON.stringify(decision.pending);
  if (!again) {
    await steps.recordDecision({
      decision,
      replica,
      skipIfUnchanged: decision.action === 'none',
      ...(also.length > 0 && {
        also: also.map((step) => ({ decision: step.decision, replica: step.replicaId })),
      }),
    });
  }

  state.lastDecision = { action: decision.action, reason: decision.reason, pending: decision.pending };
  // A deletion heard during the pass shows once the loop drains: the status is the decision's.
  state.status = modelStatus(false, decision);
  const { owner, ownerPath } = plan;
  const replicas = decision.inputs.replicas + (decision.action === 'place' && !refused ? 1 + also.length : 0);
  const attributes = JSON.stringify([owner, ownerPath, replicas, state.status]);
  if (attributes !== state.attributes) {
    upsertSearchAttributes([
      { key: LlmgwOwner, value: owner },
      { key: LlmgwOwnerPath, value: ownerPath },
      { key: LlmgwReplicas, value: replicas },
      { key: LlmgwStatus, value: state.status },
    ]);
    state.attributes = attributes;
  }
  setCurrentDetails(`**${state.status}** — ${decision.reason}`);
  return refused ? 'refused' : 'done';
}

/**
 * A new replica's ID: `r-` and 16 hex digits (64 random bits of replay-safe UUIDs, the first 8 hex
 * digits of each). It names no model and cannot be guessed: IDs are shown to readers who may not see
 * the replica's model (a victim in another tenant's decision).
 */
const replicaId = () => {
  deprecatePatch(OPAQUE_REPLICA_IDS);
  return `r-${uuid4().slice(0, 8)}${uuid4().slice(0, 8)}`;
};

/** Victims were marked draining in the reservation; their reconcilers hear why. */
async function tellVictims(decision: Decision) {
  const why =
    decision.action === 'preempt'
      ? `preempted for ${decision.model}`
      : `reclaimed for ${decision.reclaim_for}`;
  const models = new Set((decision.victims ?? []).map((victim) => victim.model));
  for (const victimModel of models) {
    try {
      await getExternalWorkflowHandle(reconcilerId(victimModel)).signal(reclaimedSignal, why);
    } catch (error) {
      // A victim without a running reconciler learns it on its next start; the drain is already recorded.
      log.warn('could not tell a reclaimed model', { model: victimModel, error: String(error) });
    }
  }
}
