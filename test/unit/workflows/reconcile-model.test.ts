// The reconciler workflow alone: its activities are stand-ins, and it runs on Temporal's time-skipping
// test server (found or installed by scripts/test-tools.sh), so an hour's resync takes no time.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import { Worker, type WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { Activities } from '../../../src/activities/types.ts';
import type { Pending, Victim } from '../../../src/domain/decision.ts';
import { registration } from '../../../src/reconcilers/search-attribute-check.ts';
import { deletedSignal, reconcilerId, stateQuery, wakeSignals } from '../../../src/workflows/messages.ts';
import type { ReconcileInput, reconcileModel } from '../../../src/workflows/reconcile-model.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../../src/workflows/search-attributes.ts';
import { decision } from '../../support/decisions.ts';
import { type Calls, fakeActivities, gate, MINUTE_MS, plan } from './fake-activities.ts';
import { timeSkipping } from './workflow-harness.ts';

type Reconciler = WorkflowHandleWithFirstExecutionRunId<typeof reconcileModel>;

const TASK_QUEUE = 'reconcile-model-test';
/** When a fake reservation committed, by the worker's clock: far after the test server's time. */
const COMMITTED_AT = 4_000_000_000_000;

let env: TestWorkflowEnvironment;
let fakes: ReturnType<typeof fakeActivities>;
let worker: Worker;
let running: Promise<void>;

/** Waits (in real time) until `holds` does; fails naming `what` after 5 s. */
async function until(what: string, holds: () => boolean | Promise<boolean>) {
  for (const started = Date.now(); !(await holds()); await sleep(20)) {
    if (Date.now() - started > 5_000) assert.fail(`gave up waiting until ${what}`);
  }
}

/**
 * Runs `body` with reconcilers whose activities answer with `answers` (see fakeActivities). Then ends
 * those it started by deleting their models: a reconciler terminated with a task under way leaves the
 * test server's time locked, and the next test's sleep would take real minutes.
 */
async function withReconcilers(
  answers: Partial<Activities>,
  body: (start: (input: ReconcileInput) => Promise<Reconciler>, calls: Calls) => Promise<void>,
) {
  const calls = fakes.answer(answers);
  const started: Reconciler[] = [];
  const start = async (input: ReconcileInput) => {
    const handle = await env.client.workflow.start<typeof reconcileModel>('reconcileModel', {
      taskQueue: TASK_QUEUE,
      workflowId: reconcilerId(input.model),
      args: [input],
    });
    started.push(handle);
    return handle;
  };
  try {
    await body(start, calls);
  } finally {
    await Promise.all(started.map((handle) => deleteModel(handle.workflowId)));
  }
}

/** Ends a reconciler (its latest run) as a deleted model's does; terminates it if that takes over 5 s. */
async function deleteModel(workflowId: string) {
  const reconciler = env.client.workflow.getHandle<typeof reconcileModel>(workflowId);
  const ended = reconciler
    .signal(deletedSignal)
    .then(() => reconciler.result())
    .then(
      () => true,
      () => true, // it had ended already
    );
  // Unref'd: the wait left behind must not hold the test process open for its 5 s.
  const late = sleep(5_000, false, { ref: false });
  if (!(await Promise.race([ended, late]))) await reconciler.terminate();
}

describe('the reconciler workflow', () => {
  // One server, one bundle and one worker for every test: each costs a second or more to make.
  before(async () => {
    let workflowBundle: WorkflowBundleWithSourceMap;
    [env, workflowBundle] = await timeSkipping();
    await env.connection.operatorService.addSearchAttributes(
      registration(env.namespace ?? 'default', SEARCH_ATTRIBUTE_KEYS),
    );
    fakes = fakeActivities(() => env.currentTimeMs());
    worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace,
      taskQueue: TASK_QUEUE,
      workflowBundle,
      activities: fakes.activities,
    });
    running = worker.run();
  });
  after(async () => {
    worker?.shutdown();
    await running;
    await env?.teardown();
  });

  it('re-plans at once after a refused reservation three times, then waits for its resync', async () => {
    const place = decision('refused', { action: 'place', profile: 'small', node: 'n1' });
    const refusal = decision('refused', { reason: 'no room on n1' });
    let plans = 0;
    await withReconcilers(
      {
        // The fifth plan finds the model gone, which ends the reconciler.
        planPass: async () => (++plans <= 4 ? plan(place, { resyncMs: 10 * MINUTE_MS }) : { exists: false }),
        reserveReplica: async () => ({ reserved: false, why: 'n1 is full', decision: refusal }),
      },
      async (start, calls) => {
        await (await start({ model: 'refused' })).result();
        assert.equal(calls.reserveReplica.length, 4);
        const at = calls.planPass.map((call) => call.at - calls.planPass[0].at);
        assert.ok(at[3] < MINUTE_MS, `the three re-plans came at once (${at})`);
        assert.ok(at[4] - at[3] >= 9 * MINUTE_MS, `the fifth plan waited for the resync (${at})`);
        assert.deepEqual(
          calls.recordDecision.map((call) => call.decision.action),
          ['none', 'none', 'none', 'none'],
        );
      },
    );
  });

  it('reserves a burst once, starts every replica of it, records each, then plans again at once', async () => {
    const places = [1, 2, 3].map((k) =>
      decision('burst', { action: 'place', profile: 'small', node: `n${k}`, reason: `place ${k}` }),
    );
    let plans = 0;
    await withReconcilers(
      {
        // The second plan finds the model gone, which ends the reconciler.
        planPass: async () =>
          ++plans === 1 ? plan(places[0], { alsoPlace: places.slice(1) }) : { exists: false },
        // The lock kept the first and third, the second's node was taken: what was reserved comes back.
        reserveReplica: async ({ decision, also }) => ({
          reserved: true,
          decision,
          also: also!.slice(1),
          at: COMMITTED_AT,
          lookAgain: true,
        }),
      },
      async (start, calls) => {
        await (await start({ model: 'burst' })).result();
        assert.equal(calls.reserveReplica.length, 1, 'one reservation for the burst');
        const [reservation] = calls.reserveReplica;
        assert.deepEqual(
          reservation.also!.map((step) => step.decision.reason),
          ['place 2', 'place 3'],
        );
        const ids = [reservation.replicaId, ...reservation.also!.map((step) => step.replicaId)];
        assert.equal(new Set(ids).size, 3, 'every replica of the burst has an ID of its own');
        for (const id of ids) {
          assert.match(id, /^r-[0-9a-f]{16}$/, 'an ID names no model and is 64 random bits');
        }
        assert.deepEqual(
          calls.startReplica.map((call) => call.replicaId).sort(),
          [ids[0], ids[2]].sort(),
          'the replicas reserved start, and only they',
        );
        assert.equal(calls.recordDecision.length, 1);
        const [record] = calls.recordDecision;
        assert.equal(record.replica, ids[0]);
        assert.deepEqual(record.also, [{ decision: places[2], replica: ids[2] }]);
        assert.equal(calls.planPass.length, 2, 'a pass whose reservation says so looks again at once');
        // Found by bench/scale: in one workflow task the workflow's clock stands still, and a view read
        // before the reservation placed the replicas again.
        assert.equal(calls.planPass[1].freshAfter, COMMITTED_AT, 'on a view read after the reservation');
      },
    );
  });

  it('after a reservation that says not to look again, plans next when woken, not at once', async () => {
    let woken = false;
    const plannedWhen: boolean[] = [];
    await withReconcilers(
      {
        // The second plan finds the model gone, which ends the reconciler.
        planPass: async () => {
          plannedWhen.push(woken);
          return plannedWhen.length === 1
            ? plan(decision('calm', { action: 'place', profile: 'small', node: 'n1', reason: 'place' }))
            : { exists: false };
        },
        reserveReplica: async ({ decision }) => ({
          reserved: true,
          decision,
          also: [],
          at: COMMITTED_AT,
          lookAgain: false,
        }),
      },
      async (start, calls) => {
        const reconciler = await start({ model: 'calm' });
        await until('the place is recorded', () => calls.recordDecision.length === 1);
        // Planning again at once would take a few milliseconds: give it far longer than that.
        await sleep(500);
        assert.equal(calls.planPass.length, 1, 'no second pass without a wake-up');
        woken = true;
        await reconciler.signal(wakeSignals.replicaChanged);
        await reconciler.result();
        assert.deepEqual(plannedWhen, [false, true], 'the next pass came with the replica change');
      },
    );
  });

  it('drains every replica a pass removes in one call, with the reason of the decision', async () => {
    const passes: number[] = [];
    await withReconcilers(
      {
        planPass: async () => {
          passes.push(passes.length);
          return passes.length === 1
            ? plan(
                decision('fell', { action: 'remove', replica: 'r-3', reason: 'scale down; and 1 more: r-2' }),
                {
                  alsoRemove: ['r-2'],
                },
              )
            : { exists: false };
        },
      },
      async (start, calls) => {
        const reconciler = await start({ model: 'fell' });
        await until('the removal is recorded', () => calls.recordDecision.length === 1);
        assert.deepEqual(
          calls.drainReplicas.map(({ replicaIds, reason }) => ({ replicaIds, reason })),
          [{ replicaIds: ['r-3', 'r-2'], reason: 'scale down; and 1 more: r-2' }],
        );
        await reconciler.signal(wakeSignals.replicaChanged);
        await reconciler.result();
      },
    );
  });

  it('drains a model deleted while a pass runs once the pass ends, and ends when it is gone', async () => {
    // Held in an activity the worker runs apart (planning runs in the workflow task, signals wait for it).
    const recording = gate();
    let drains = 0;
    await withReconcilers(
      {
        recordDecision: () => recording.pass(),
        // Its replicas take a resync to stop: the model is gone at the second drain.
        drainModel: async () => ++drains > 1,
      },
      async (start, calls) => {
        const reconciler = await start({ model: 'deleted' });
        await recording.arrived;
        await reconciler.signal(deletedSignal);
        recording.open();
        await until('the first drain', () => calls.drainModel.length === 1);
        await until(
          'the status says deleting',
          async () => (await reconciler.query(stateQuery)).status === 'deleting',
        );
        await reconciler.result();
        assert.equal(calls.planPass.length, 1, 'a deleted model is not planned again');
        assert.equal(calls.recordDecision.length, 1, 'the pass under way is recorded');
        assert.deepEqual(
          calls.drainModel.map(({ model }) => model),
          ['deleted', 'deleted'],
        );
      },
    );
  });

  it('continues as new at its bounds, carrying its memory and last decision', async () => {
    const waiting = decision('carried', {
      reason: 'no profile to place',
      pending: [{ code: 'no_profile' }],
      memory: { scaleDownSince: 1_000 },
    });
    await withReconcilers(
      { planPass: async () => plan(waiting, { backedOffUntil: { small: 2_000 } }) },
      async (start, calls) => {
        const first = await start({ model: 'carried', bounds: { passes: 2, signals: 100 } });
        // A signal that comes before the first pass is part of it: wait, so that it asks for a second.
        await until('the first pass plans', () => calls.planPass.length === 1);
        await first.signal(wakeSignals.specChanged);
        await until('the next run plans', () => calls.planPass.length === 3);
        const memory = { scaleDownSince: 1_000, backedOffUntil: { small: 2_000 } };
        assert.deepEqual(calls.planPass[2].memory, memory);

        const next = await env.client.workflow.getHandle(first.workflowId).describe();
        assert.notEqual(next.runId, first.firstExecutionRunId);
        const { events } = await env.client.workflow.getHandle(first.workflowId, next.runId).fetchHistory();
        const started = events?.[0].workflowExecutionStartedEventAttributes;
        assert.equal(started?.continuedExecutionRunId, first.firstExecutionRunId);
        assert.deepEqual(defaultPayloadConverter.fromPayload(started?.input?.payloads?.[0] ?? {}), {
          model: 'carried',
          bounds: { passes: 2, signals: 100 },
          memory,
          lastDecision: { action: 'none', reason: 'no profile to place', pending: [{ code: 'no_profile' }] },
          deleting: false,
        });
      },
    );
  });

  it('carries a deletion it planned at its bounds: the next run drains without planning', async () => {
    await withReconcilers(
      { planPass: async ({ model }) => plan(decision(model), { deleting: true }) },
      async (start, calls) => {
        const first = await start({ model: 'deleted-at-bounds', bounds: { passes: 1, signals: 100 } });
        await until('the next run drains', () => calls.drainModel.length === 1);
        await env.client.workflow.getHandle(first.workflowId).result();
        const last = await env.client.workflow.getHandle(first.workflowId).describe();
        assert.notEqual(last.runId, first.firstExecutionRunId);
        assert.equal(calls.planPass.length, 1);
      },
    );
  });

  it('plans again on its resync timer, from the store as it was at its last pass', async () => {
    await withReconcilers(
      { planPass: async ({ model }) => plan(decision(model), { resyncMs: 10 * MINUTE_MS }) },
      async (start, calls) => {
        await start({ model: 'resync' });
        await until('the first pass is recorded', () => calls.recordDecision.length === 1);
        await env.sleep(5 * MINUTE_MS);
        assert.equal(calls.planPass.length, 1, 'nothing woke it before its resync');
        await env.sleep(7 * MINUTE_MS);
        await until('the resync plans', () => calls.planPass.length === 2);
        const [first, resync] = calls.planPass;
        assert.ok(resync.at - first.at >= 9 * MINUTE_MS);
        assert.ok(resync.freshAfter !== undefined && resync.freshAfter - first.at < MINUTE_MS);
        await env.sleep(12 * MINUTE_MS);
        await until('the next resync plans', () => calls.planPass.length === 3);
        // Each resync decided as the last pass did: nothing new to record.
        assert.equal(calls.recordDecision.length, 1);
      },
    );
  });

  it('records a resync that waits again only when it waits for something else', async () => {
    const noRoom: Pending = { code: 'no_room', profile: 'small', needs: { gpus: 1 } };
    const backoff: Pending = { code: 'backoff', profile: 'small' };
    const waits = [[noRoom], [noRoom], [backoff]];
    let plans = 0;
    await withReconcilers(
      {
        planPass: async ({ model }) =>
          plan(decision(model, { reason: 'scale up', pending: waits[Math.min(plans++, 2)] }), {
            resyncMs: 10 * MINUTE_MS,
          }),
      },
      async (start, calls) => {
        const reconciler = await start({ model: 'waits' });
        await until('the first pass is recorded', () => calls.recordDecision.length === 1);
        const view = await reconciler.query(stateQuery);
        assert.deepEqual([view.status, view.pendingReason], ['pending', [noRoom]]);
        await env.sleep(12 * MINUTE_MS);
        await until('the resync plans', () => calls.planPass.length === 2);
        await env.sleep(12 * MINUTE_MS);
        await until('the next resync is recorded', () => calls.recordDecision.length === 2);
        // The same codes (a new copy of them) said again nothing new; other codes did.
        assert.deepEqual(
          calls.recordDecision.map((call) => call.decision.pending),
          [[noRoom], [backoff]],
        );
      },
    );
  });

  it('tells the reconcilers of the replicas it reclaims why, once per model', async () => {
    const victim = (replica: string, model: string): Victim => ({
      replica,
      model,
      owner: 'team:lender',
      node: 'n1',
      resources: { gpus: 1 },
    });
    const reclaim = decision('thief', {
      action: 'reclaim',
      profile: 'small',
      node: 'n1',
      reclaim_for: 'team:thief',
      // victim-b has no running reconciler: it learns of the drain when it starts.
      victims: [victim('a-1', 'victim-a'), victim('a-2', 'victim-a'), victim('b-1', 'victim-b')],
    });
    let thiefPlans = 0;
    await withReconcilers(
      {
        planPass: async ({ model }) =>
          plan(model === 'thief' && ++thiefPlans === 1 ? reclaim : decision(model)),
      },
      async (start, calls) => {
        const lender = await start({ model: 'victim-a' });
        await until('victim-a is steady', async () => (await lender.query(stateQuery)).status === 'steady');
        const thief = await start({ model: 'thief' });
        const recorded = () => calls.recordDecision.filter((call) => call.decision.model === 'thief');
        await until('the reclaim is recorded', () => recorded().length > 0);
        assert.equal(recorded()[0].decision.action, 'reclaim');

        const { events } = await thief.fetchHistory();
        const told = (events ?? []).flatMap((event) => {
          const signal = event.signalExternalWorkflowExecutionInitiatedEventAttributes;
          return signal ? [`${signal.workflowExecution?.workflowId} ${signal.signalName}`] : [];
        });
        assert.deepEqual(told, ['reconcile:victim-a reclaimed', 'reconcile:victim-b reclaimed']);
        await until('victim-a hears why', async () => (await lender.query(stateQuery)).notes.length > 0);
        assert.deepEqual((await lender.query(stateQuery)).notes, ['reclaimed for team:thief']);
        await until(
          'victim-a plans again',
          () => calls.planPass.filter((call) => call.model === 'victim-a').length === 2,
        );
      },
    );
  });

  it('reserves for a preemption, tells its victims why, and leaves the start to when they stopped', async () => {
    const preempt = decision('high', {
      action: 'preempt',
      profile: 'small',
      node: 'n1',
      preempt_limit: 'team:shared',
      claim: { priority: 5, tier: 'floor', k: 1, of: 1 },
      victims: [
        {
          replica: 'low-1',
          model: 'low',
          owner: 'team:shared',
          node: 'n1',
          resources: { gpus: 1 },
          claim: { priority: 0, tier: 'surplus', k: 2, of: 1 },
        },
      ],
    });
    let highPlans = 0;
    await withReconcilers(
      {
        planPass: async ({ model }) =>
          plan(model === 'high' && ++highPlans === 1 ? preempt : decision(model)),
      },
      async (start, calls) => {
        const low = await start({ model: 'low' });
        await until('low is steady', async () => (await low.query(stateQuery)).status === 'steady');
        await start({ model: 'high' });
        await until('low hears why', async () => (await low.query(stateQuery)).notes.length > 0);
        assert.deepEqual((await low.query(stateQuery)).notes, ['preempted for high']);
        const reserved = calls.reserveReplica.filter((call) => call.decision.model === 'high');
        assert.equal(reserved.length, 1);
        assert.equal(reserved[0].decision.action, 'preempt');
        // Its start waits for the victims: a later pass starts it, never this one.
        assert.deepEqual(
          calls.startReplica.filter((call) => call.replicaId === reserved[0].replicaId),
          [],
        );
        const recorded = calls.recordDecision.find((call) => call.decision.model === 'high');
        assert.equal(recorded?.replica, reserved[0].replicaId);
      },
    );
  });

  it('plans again after a pass during which a wake signal came, with the newer policy', async () => {
    const recording = gate();
    await withReconcilers({ recordDecision: () => recording.pass() }, async (start, calls) => {
      const reconciler = await start({ model: 'woken' });
      await recording.arrived;
      await reconciler.signal(wakeSignals.quotaChanged);
      recording.open();
      await until('it plans again', () => calls.planPass.length === 2);
      assert.equal(calls.planPass[0].policyChangedAt, 0);
      assert.ok((calls.planPass[1].policyChangedAt ?? 0) > 0, 'the quota change asks for a newer policy');
    });
  });
});
