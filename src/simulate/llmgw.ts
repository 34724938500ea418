import { EMPTY_MEMORY, type ModelMemory, type Snapshot } from '../domain/snapshot.ts';
import { refreshEvery } from '../gateway/load-reporter.ts';
import { looksAgainAfter } from '../policy/burst.ts';
import { type LoadZone, loadStanding, wakesReconciler } from '../policy/load-zone.ts';
import { decidePass, type PassDecisions } from '../policy/pass.ts';
import { startRefusal } from '../policy/reservation.ts';
import { buildView, type View } from '../policy/view.ts';
import type { Controller, World } from './world.ts';
import { snapshotOf } from './world.ts';

/** The most passes a reconciler makes at one tick when each asks to look again (reclaims, full bursts). */
const MAX_PASSES_PER_TICK = 8;

/** What a reconciler carries from pass to pass, as the workflow does. */
export interface Carried {
  memory: ModelMemory;
  /** When it looks again untold. */
  resyncAt: number;
}

interface Reconciler extends Carried {
  /** The zone and capacity of the last load signal (reconcilers/load-signals.ts). */
  signalled?: { zone: LoadZone; capacity: number };
  dirty: boolean;
}

/** A pass as it was planned: the view's snapshot, the memory it began with and what it decided. */
export interface RecordedPass {
  model: string;
  snapshot: Snapshot;
  memory: ModelMemory;
  plan: PassDecisions;
}

/**
 * A simulated pass's plan on the view (policy/pass.ts, as the planPass activity answers it), and what the
 * reconciler carries from it to the next pass: the memory, and the resync.
 */
export function planPass(view: View, model: string, carried: Carried, resyncMs: number): PassDecisions {
  const plan = decidePass(view, model, carried.memory, resyncMs);
  carried.memory = plan.memory;
  carried.resyncAt = view.now + plan.resyncMs;
  return plan;
}

/**
 * llmgw's reconcilers on the simulated clock. The rules are the policy core's own (decidePass, as the
 * planPass activity runs it; loadZone, startRefusal, looksAgainAfter); this file only does what the
 * workflow and activities do with them: the gateway's load reports, the wake-ups (a load signal, a
 * replica ready or stopped, a reclaim, the resync), reserving and starting, draining victims and
 * removed replicas.
 */
export function llmgwController(options: { record?: RecordedPass[] } = {}): Controller {
  const reconcilers = new Map<string, Reconciler>();
  const load: Snapshot['load'] = {};
  const reported = new Map<string, { total: number; at: number }>();

  /**
   * The gateway reports a change at once (true: it may signal), and marks all its reports fresh every
   * refreshEvery(staleness), an idle model's none included (gateway/load-reporter.ts).
   */
  function report(world: World, model: string) {
    const pool = world.pools.get(model)!;
    const total = pool.running + pool.waiting;
    const last = reported.get(model);
    if (last && last.total === total) {
      if (world.now - last.at >= refreshEvery(world.scenario.settings.loadStaleMs)) {
        load[model] = { ...load[model], reported_at: world.now };
        reported.set(model, { total, at: world.now });
      }
      return false;
    }
    load[model] = {
      in_flight: pool.running,
      waiting: pool.waiting,
      ...(pool.queueSince !== undefined && { waiting_since: pool.queueSince }),
      reported_at: world.now,
    };
    reported.set(model, { total, at: world.now });
    return true;
  }

  /** Whether a load report wakes the reconciler, as the load endpoint weighs it (reconcilers/load-signals.ts). */
  function signals(view: View, model: string, state: Reconciler): boolean {
    const standing = loadStanding(view, view.models.get(model)!);
    if (!wakesReconciler(state.signalled, standing)) return false;
    state.signalled = { zone: standing.zone, capacity: standing.capacity };
    return true;
  }

  /** Starts each of these reserved replicas that its node admits (activities startReplica). */
  function startAdmitted(world: World, replicaIds: readonly string[]) {
    for (const id of replicaIds) {
      const replica = world.cluster.replicas.find((r) => r.id === id && r.state === 'pending');
      if (!replica) continue;
      const onNode = world.cluster.replicas.filter((r) => r.node === replica.node);
      const node = world.cluster.nodes.find((n) => n.name === replica.node)!;
      if (startRefusal(node, onNode, id, world.cluster.replicas) === null)
        world.cluster.start(replica, world.now);
    }
  }

  /**
   * One pass as the workflow runs it: plan on the state as it is, start what was reserved, then reserve
   * and start, reclaim or drain; true when it looks again at once.
   */
  function pass(world: World, model: string, state: Reconciler, wake: Set<string>): boolean {
    const view = buildView(snapshotOf(world, { ...load }));
    const memory = state.memory;
    const plan = planPass(view, model, state, world.scenario.resyncMs);
    options.record?.push({ model, snapshot: view.snapshot, memory, plan });
    startAdmitted(world, plan.startable);
    const { decision } = plan;
    if (decision.action === 'remove') {
      for (const id of [decision.replica!, ...plan.alsoRemove]) world.cluster.drain(id, world.now);
    }
    if (decision.action === 'none' || decision.action === 'remove') return false;
    const spec = view.models.get(model)!;
    const burst = [decision, ...plan.alsoPlace];
    const reserved = burst.map((planned) => {
      const profile = spec.profiles.find((p) => p.name === planned.profile)!;
      return world.cluster.add(model, profile, planned.node!, world.now, false).id;
    });
    // The victims drain for the first replica reserved: a reclaim or preemption is alone in its burst.
    for (const victim of decision.victims ?? []) {
      world.cluster.drain(victim.replica, world.now, {
        for: model,
        reservation: reserved[0],
        by: decision.action === 'preempt' ? 'preempt' : 'reclaim',
      });
      wake.add(victim.model);
    }
    startAdmitted(world, reserved);
    return looksAgainAfter(burst);
  }

  return {
    name: 'llmgw',
    step(world) {
      const wake = new Set<string>();
      const reportedNow = new Set(
        world.scenario.models.filter((m) => report(world, m.name)).map((m) => m.name),
      );
      const view = buildView(snapshotOf(world, { ...load }));
      for (const model of world.scenario.models) {
        const state =
          reconcilers.get(model.name) ??
          reconcilers
            .set(model.name, { memory: EMPTY_MEMORY, resyncAt: world.now, dirty: true })
            .get(model.name)!;
        if (reportedNow.has(model.name) && signals(view, model.name, state)) state.dirty = true;
        const waitsForRoom =
          world.changed.size > 0 && world.cluster.of(model.name).some((r) => r.state === 'pending');
        if (world.changed.has(model.name) || waitsForRoom || world.now >= state.resyncAt) state.dirty = true;
      }
      // Passes run in the models' order; one that reclaims wakes its victims' models in the same tick.
      for (let round = 0; round < MAX_PASSES_PER_TICK; round++) {
        let any = false;
        for (const model of world.scenario.models) {
          const state = reconcilers.get(model.name)!;
          if (!state.dirty && !wake.has(model.name)) continue;
          wake.delete(model.name);
          any = true;
          state.dirty = pass(world, model.name, state, wake);
        }
        if (!any) break;
      }
    },
  };
}
