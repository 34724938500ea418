import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { llmgwController, type RecordedPass } from '../../../src/simulate/llmgw.ts';
import { simulate } from '../../../src/simulate/run.ts';
import { FROM, gpuModel, held, loadOf, scene } from './scene.ts';

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
