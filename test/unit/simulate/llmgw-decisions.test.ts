import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { Replica } from '../../../src/domain/cluster.ts';
import type { Decision } from '../../../src/domain/decision.ts';
import { EMPTY_MEMORY, type ModelMemory, type Snapshot } from '../../../src/domain/snapshot.ts';
import { buildView } from '../../../src/policy/view.ts';
import { type Carried, llmgwController, planPass, type RecordedPass } from '../../../src/simulate/llmgw.ts';
import { simulate } from '../../../src/simulate/run.ts';
import { FROM, gpuModel, held, loadOf, scene } from './scene.ts';

/**
 * Passes of the reconciler's real path, recorded by `npm run record-passes` (scripts/record-passes.ts):
 * the planPass activity on a real Postgres, the state it planned on, the memory the workflow gave it and
 * carried on from its answer. A pass without replicas saw those of the pass before.
 */
interface Recorded extends Omit<Snapshot, 'now' | 'replicas' | 'load'> {
  resyncMs: number;
  passes: {
    model: string;
    now: number;
    replicas?: Replica[];
    load: Snapshot['load'];
    memory: ModelMemory;
    planned: {
      decision: Decision;
      alsoPlace: Decision[];
      alsoRemove?: string[];
      startable: string[];
      resyncMs: number;
    };
    memoryAfter: ModelMemory;
  }[];
}
const fixture = join(import.meta.dirname, '..', '..', 'fixtures', 'simulate', 'planned-passes.json');
const RERECORD = 'if the policy changed what a pass decides on purpose, record again: npm run record-passes';

/** As the activity's answer comes to the workflow: JSON, without undefined fields. */
const asSent = (value: unknown) => JSON.parse(JSON.stringify(value));

describe("llmgw's simulated passes, on the states the reconciler's real path planned on", () => {
  const { resyncMs, passes, ...fixed } = JSON.parse(readFileSync(fixture, 'utf8')) as Recorded;

  it('decide, carry the memory and resync as the planPass activity and the workflow did, pass after pass', () => {
    // Each simulated reconciler carries its own memory from pass to pass, from the first one on.
    const carried = new Map<string, Carried>();
    let replicas: Replica[] = [];
    for (const [i, recorded] of passes.entries()) {
      const at = `pass ${i} (${recorded.model} at ${recorded.now})`;
      replicas = recorded.replicas ?? replicas;
      const state = carried.get(recorded.model) ?? { memory: EMPTY_MEMORY, resyncAt: 0 };
      carried.set(recorded.model, state);
      assert.deepEqual(state.memory, recorded.memory, `${at}: the memory it begins with`);
      const view = buildView({ ...fixed, now: recorded.now, replicas, load: recorded.load });
      const plan = planPass(view, recorded.model, state, resyncMs);
      const { decision, alsoPlace, alsoRemove, startable } = plan;
      assert.deepEqual(
        asSent({ decision, alsoPlace, alsoRemove, startable, resyncMs: plan.resyncMs }),
        recorded.planned,
        `${at}: ${RERECORD}`,
      );
      assert.deepEqual(state.memory, recorded.memoryAfter, `${at}: the memory it carries on`);
      assert.equal(state.resyncAt, recorded.now + recorded.planned.resyncMs, `${at}: its resync`);
    }
  });

  it('reach every kind of pass the comparison is about', () => {
    const planned = passes.map((p) => p.planned);
    const actions = new Set(planned.map((p) => p.decision.action));
    for (const action of ['place', 'reclaim', 'remove', 'none'])
      assert.ok(actions.has(action as never), action);
    assert.ok(
      planned.some((p) => p.alsoPlace.length > 0),
      'a burst',
    );
    assert.ok(
      planned.some((p) => (p.alsoRemove ?? []).length > 0),
      'several replicas removed in one pass',
    );
    assert.ok(
      passes.some((p) => (p.memoryAfter.growth?.rises.length ?? 0) > 0),
      'a rise remembered',
    );
    assert.ok(
      planned.some((p) => p.startable.length > 0),
      'reserved replicas to start',
    );
    assert.ok(
      planned.some((p) => p.decision.pending?.some((why) => why.code === 'no_room')),
      'no room',
    );
    assert.ok(new Set(planned.map((p) => p.resyncMs)).size > 1, 'a longer resync at rest');
    assert.ok(
      passes.some((p) => p.memoryAfter.scaleDownSince !== null),
      'a scale-down window carried',
    );
  });
});

describe("llmgw's simulated decisions", () => {
  // chat rises to 40 in flight and falls back; code bursts while chat is high, on a node of 6 GPUs.
  const scenario = scene([gpuModel('chat'), gpuModel('code')], {
    nodes: [{ name: 'gpu-1', capacity: { gpus: 6 }, gpu_model: 'H100', labels: {}, state: 'ready' }],
  });
  const load = loadOf(
    {
      chat: [...held(6, FROM, 1_200_000), ...held(34, FROM + 120_000, 300_000)],
      code: held(20, FROM + 200_000, 60_000),
    },
    1_200_000,
  );
  const record: RecordedPass[] = [];
  const run = simulate(scenario, load.requests, llmgwController({ record }), {
    from: load.from,
    until: load.until,
    initial: { chat: 1, code: 1 },
  });
  const actions = (model: string) =>
    record.filter((p) => p.model === model).map((p) => p.plan.decision.action);

  it('scale chat up, wait for room, and take replicas back after the window', () => {
    assert.ok(actions('chat').includes('place'));
    assert.ok(actions('chat').includes('remove'));
    assert.ok(record.some((p) => p.plan.decision.pending?.some((why) => why.code === 'no_room')));
  });

  it('are applied as decided: one start per placed replica, one drain per removal', () => {
    const placed = record
      .flatMap((p) => [p.plan.decision, ...p.plan.alsoPlace])
      .filter((d) => d.action === 'place');
    assert.equal(run.cluster.starts.length, placed.length);
    const removed = record.filter((p) => p.plan.decision.action === 'remove').length;
    const replicasAtEnd = run.cluster.replicas.filter((r) => r.state !== 'draining').length;
    assert.equal(replicasAtEnd, 2 + placed.length - removed);
  });

  it('carry the scale-down window from pass to pass', () => {
    const remembered = record.filter((p) => p.memory.scaleDownSince !== null);
    assert.ok(remembered.length > 0);
    for (const pass of remembered) assert.ok(pass.memory.scaleDownSince! <= pass.snapshot.now);
  });
});
