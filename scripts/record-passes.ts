// Records what the reconciler's real path plans, pass after pass, as a fixture for
// test/unit/simulate/llmgw-decisions.test.ts: the planPass activity (src/activities) on a real Postgres,
// with the memory the workflow carries (memoryAfter, as src/workflows/reconcile-model.ts carries it), and
// the workflow's steps after it through the activities (start what is reserved, reserve, start, drain,
// look again). Each pass keeps the state the activity planned on (the store read at the same moment),
// the memory it was given, what it answered and the memory carried on. Run it when the policy changes
// what a pass decides, and commit the fixture with the change:
//   npm run record-passes
// On a simulated clock, 5 s a step: chat (team ml, guaranteed 4 GPUs) and code (team web, borrowing)
// on one node of 6 GPUs; code bursts and fills the node, chat rises and reclaims, both fall back and
// scale down; idle has no replica and wants none (at rest, its resync is longer).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createActivities } from '../src/activities/index.ts';
import { PolicyCache } from '../src/activities/policy-cache.ts';
import type { ClusterDriver } from '../src/domain/cluster-driver.ts';
import { RESERVING_ACTIONS } from '../src/domain/decision.ts';
import type { Model } from '../src/domain/model.ts';
import {
  DEFAULT_POLICY_SETTINGS,
  EMPTY_MEMORY,
  type ModelMemory,
  memoryAfter,
} from '../src/domain/snapshot.ts';
import { putLoadReport } from '../src/store/load.ts';
import { putModel } from '../src/store/models.ts';
import { putNode } from '../src/store/nodes.ts';
import { putQuota } from '../src/store/quotas.ts';
import { transition } from '../src/store/replicas.ts';
import { readQuotaPolicy, readSnapshot } from '../src/store/snapshot.ts';
import { createScope } from '../src/store/tenancy.ts';
import { stopOwnServices } from '../test/support/services.ts';
import { freshStore } from '../test/support/stack.ts';

const file = join(import.meta.dirname, '..', 'test', 'fixtures', 'simulate', 'planned-passes.json');
const progress = (line: string) => process.stderr.write(`record-passes: ${line}\n`);

// A memory of bursts shorter than the hour, so that the 10 minutes recorded reach the scale-down after the
// room kept for code's and chat's rises has decayed.
const SETTINGS = { ...DEFAULT_POLICY_SETTINGS, burstMemoryMs: 240_000 };
const RESYNC_MS = 30_000;
const STEP_MS = 5_000;
const STEPS = 120;
const START_DELAY_MS = 30_000;
const DRAIN_GRACE_MS = 10_000;
/** Passes a reconciler makes at one step when each asks to look again (the simulator's bound). */
const MAX_PASSES = 8;

/** In flight per model at a step: code bursts at 60 s, chat rises at 120 s, both fall back at 300 s. */
const loadAt = (model: string, at: number): number => {
  // chat falls lower than it began, so that its scale-down sheds several replicas in one pass.
  if (model === 'chat') return at < 120_000 ? 6 : at < 300_000 ? 30 : 2;
  if (model === 'code') return at >= 60_000 && at < 300_000 ? 40 : 4;
  return 0;
};

const gpu = { gpus: 1, cores: 4, memory_gib: 32 };
const MODELS = [
  { name: 'chat', owner: 'team:ml', min_replicas: 1 },
  { name: 'code', owner: 'team:web', min_replicas: 1 },
  { name: 'idle', owner: 'team:web', min_replicas: 0 },
] as const;

progress('starting Postgres and Temporal (the store is all the activity needs)');
const sql = await freshStore();
try {
  await createScope(sql, 'org', 'acme', 'Acme', null);
  await createScope(sql, 'team', 'ml', 'ml', 'acme');
  await createScope(sql, 'team', 'web', 'web', 'acme');
  await putQuota(sql, { scope: 'team:ml', guarantee: { gpus: 4 } }, 'record-passes');
  await putNode(sql, {
    name: 'gpu-1',
    capacity: { gpus: 6, cores: 48, memory_gib: 512 },
    gpu_model: null,
    labels: {},
  });
  for (const m of MODELS) {
    await putModel(sql, {
      ...m,
      max_replicas: 6,
      profiles: [{ name: 'g1', priority: 1, resources: gpu, default_concurrency: 8 }],
    });
  }

  let clock = Date.now();
  const driver: ClusterDriver = { start: async () => {}, drain: async () => {} };
  const activities = createActivities({
    sql,
    driver,
    policyCache: new PolicyCache(() => readQuotaPolicy(sql), 3_600_000),
    config: { policy: SETTINGS, resyncMs: RESYNC_MS },
    now: () => clock,
  });

  /**
   * Starting replicas turn ready after the start delay, draining ones stop after the grace (simulated
   * time); the models whose replicas moved.
   */
  const since = new Map<string, number>();
  const moveReplicas = async () => {
    const moved = new Set<string>();
    for (const [from, to, after] of [
      ['starting', 'ready', START_DELAY_MS],
      ['draining', 'stopped', DRAIN_GRACE_MS],
    ] as const) {
      const replicas = await sql<
        { id: string; model: string }[]
      >`select id, model from replicas where state = ${from}`;
      for (const { id, model } of replicas) {
        const key = `${id}:${from}`;
        if (!since.has(key)) since.set(key, clock);
        if (clock - since.get(key)! >= after && (await transition(sql, id, [from], to))) moved.add(model);
      }
    }
    return moved;
  };

  const memories = new Map<string, ModelMemory>(MODELS.map((m) => [m.name, EMPTY_MEMORY]));
  /** When each reconciler resyncs untold; the models a reclaim took replicas of (their reconcilers are told). */
  const resyncAt = new Map<string, number>();
  const told = new Set<string>();
  let fixed: Record<string, unknown> | undefined;
  const passes: unknown[] = [];
  let lastReplicas: unknown;
  let serial = 0;

  /** One pass as the workflow runs it; true when it looks again at once. */
  const pass = async (model: string): Promise<boolean> => {
    clock += 1; // a pass after a change reads the store after it
    const memory = memories.get(model)!;
    const plan = await activities.planPass({ model, memory, freshAfter: clock });
    if (!plan.exists) throw new Error(`model ${model} is gone`);
    const { now, settings, scopes, quotas, models, measurements, nodes, replicas, load } = await readSnapshot(
      sql,
      clock,
      SETTINGS,
    );
    const still = { settings, scopes, quotas, models, measurements, nodes };
    fixed ??= still;
    if (JSON.stringify(still) !== JSON.stringify(fixed)) throw new Error('the quota policy or nodes changed');
    const carried = memoryAfter(memory, plan.decision.memory, plan.backedOffUntil);
    memories.set(model, carried);
    resyncAt.set(model, clock + plan.resyncMs);
    // Replicas only when they changed since the pass before: most passes see the same ones.
    const same = JSON.stringify(replicas) === JSON.stringify(lastReplicas);
    lastReplicas = replicas;
    passes.push({
      model,
      now,
      ...(!same && { replicas }),
      load,
      memory,
      planned: {
        decision: plan.decision,
        alsoPlace: plan.alsoPlace ?? [],
        alsoRemove: plan.alsoRemove ?? [],
        startable: plan.startable,
        resyncMs: plan.resyncMs,
      },
      memoryAfter: carried,
    });

    for (const replicaId of plan.startable) await activities.startReplica({ replicaId });
    const { decision } = plan;
    if (decision.action === 'remove') {
      const replicaIds = [decision.replica!, ...(plan.alsoRemove ?? [])];
      await activities.drainReplicas({ replicaIds, reason: decision.reason });
    }
    if (!RESERVING_ACTIONS.includes(decision.action)) return false;
    const replicaId = `${model}-${++serial}`;
    const also = (plan.alsoPlace ?? []).map((next) => ({
      decision: next,
      replicaId: `${model}-${++serial}`,
    }));
    const reservation = await activities.reserveReplica({
      decision,
      replicaId,
      ...(also.length > 0 && { also }),
    });
    if (!reservation.reserved)
      throw new Error(`a reservation was refused with one reconciler at a time: ${reservation.why}`);
    for (const victim of (reservation.decision ?? decision).victims ?? []) told.add(victim.model);
    if ((reservation.decision ?? decision).action === 'place') {
      for (const id of [replicaId, ...(reservation.also ?? []).map((step) => step.replicaId)]) {
        await activities.startReplica({ replicaId: id });
      }
    }
    return reservation.lookAgain ?? true;
  };

  const start = clock;
  const reported = new Map<string, number>();
  for (let step = 0; step < STEPS; step++) {
    clock = start + step * STEP_MS;
    const woken = await moveReplicas();
    // A replica that moved may leave room for one that waits (the driver tells every reconciler concerned).
    const waiting = await sql<
      { model: string }[]
    >`select distinct model from replicas where state = 'pending'`;
    if (woken.size > 0) for (const { model } of waiting) woken.add(model);
    for (const m of MODELS) {
      const inFlight = loadAt(m.name, clock - start);
      if (reported.get(m.name) !== inFlight) woken.add(m.name);
      reported.set(m.name, inFlight);
      if (clock >= (resyncAt.get(m.name) ?? clock)) woken.add(m.name);
      await putLoadReport(sql, m.name, 'recorder', inFlight, 0, {
        now: clock,
        staleMs: SETTINGS.loadStaleMs,
        maxSources: SETTINGS.loadSourcesMax,
      });
    }
    // Reported at the simulated time (the store stamps its own).
    await sql`update load_reports set reported_at = to_timestamp(${clock / 1000})`;
    // A reconciler passes when it is woken: its load changed, its replicas moved, a reclaim took one of
    // them, or its resync came; it looks again at once when its pass says so.
    for (const m of MODELS) {
      const tellsIt = told.delete(m.name);
      if (!woken.has(m.name) && !tellsIt) continue;
      for (let round = 0; round < MAX_PASSES && (await pass(m.name)); round++);
    }
  }
  const models = (fixed!.models as Model[]).map((m) => m.name).join(', ');
  // One pass a line.
  const head = JSON.stringify({ resyncMs: RESYNC_MS, ...fixed }).slice(0, -1);
  writeFileSync(file, `${head},"passes":[\n${passes.map((p) => JSON.stringify(p)).join(',\n')}\n]}\n`);
  progress(`wrote ${file}: ${passes.length} passes of ${models}`);
} finally {
  await sql.end({ timeout: 5 });
  await stopOwnServices();
}
