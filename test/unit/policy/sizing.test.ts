import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { sizeForThroughput } from '../../../src/policy/sizing.ts';
import {
  cores,
  gpus,
  measured,
  model,
  NOW,
  node,
  profile,
  quota,
  replica,
  SCOPES,
  world,
} from './fixtures.ts';

const h100 = profile('vllm-h100', gpus(2, { cores: 16 }), { priority: 10, gpu_model: 'H100' });
const cpuLlama = profile('cpu-llama', cores(16));
const chat = model('chat', [h100, cpuLlama], { owner: 'team:ml', max_replicas: 20 });
const measurements = [measured('chat', 'vllm-h100', 10, 1000), measured('chat', 'cpu-llama', 4, 400)];

function scene(parts: Partial<Snapshot> = {}): Snapshot {
  return world({
    scopes: SCOPES,
    models: [chat],
    measurements,
    nodes: [node('gpu-1', gpus(8, { cores: 64 }), { gpu_model: 'H100' }), node('cpu-1', cores(64))],
    ...parts,
  });
}
const running = (n: number) =>
  Array.from({ length: n }, (_, i) => replica(`r${i}`, { model: 'chat', profile: h100, node: 'gpu-1' }));

describe('sizing for a throughput', () => {
  it('as many replicas of the first profile as the target needs', () => {
    assert.deepEqual(sizeForThroughput(scene(), 'chat', 2500), {
      plan: [{ profile: 'vllm-h100', replicas: 3, tokens_per_sec: 3000 }],
      reaches_tokens_per_sec: 3000,
      fits: true,
      blocked_by: [],
    });
  });

  it('counts what the model runs first and plans only what to add', () => {
    const sizing = sizeForThroughput(scene({ replicas: running(2) }), 'chat', 3500);
    assert.deepEqual(sizing.plan, [{ profile: 'vllm-h100', replicas: 2, tokens_per_sec: 2000 }]);
    assert.equal(sizing.reaches_tokens_per_sec, 4000);
  });

  it('already there: nothing to add', () => {
    assert.deepEqual(sizeForThroughput(scene({ replicas: running(2) }), 'chat', 2000).plan, []);
  });

  it('a limit stops one profile and the next takes the rest', () => {
    const sizing = sizeForThroughput(
      scene({ replicas: running(3), quotas: [quota('team:ml', undefined, gpus(8))] }),
      'chat',
      5000,
    );
    assert.deepEqual(sizing, {
      plan: [
        { profile: 'vllm-h100', replicas: 1, tokens_per_sec: 1000 },
        { profile: 'cpu-llama', replicas: 3, tokens_per_sec: 1200 },
      ],
      reaches_tokens_per_sec: 5200,
      fits: true,
      blocked_by: ['limit of team Acme / ml: holds 8 GPUs + 2 > 8 (profile vllm-h100)'],
    });
  });

  it('free room is used up one replica at a time', () => {
    const sizing = sizeForThroughput(scene(), 'chat', 100_000);
    // gpu-1: 4 replicas (8 GPUs); then cpu-llama on cpu-1 (4) and on what gpu-1 keeps of its cores (0).
    assert.deepEqual(sizing.plan, [
      { profile: 'vllm-h100', replicas: 4, tokens_per_sec: 4000 },
      { profile: 'cpu-llama', replicas: 4, tokens_per_sec: 1600 },
    ]);
    assert.equal(sizing.fits, false);
    assert.deepEqual(sizing.blocked_by, [
      'no room for profile vllm-h100 (needs 2 GPUs, 16 cores)',
      'no room for profile cpu-llama (needs 16 cores)',
    ]);
  });

  it('an unmeasured profile has no throughput to plan with', () => {
    const sizing = sizeForThroughput(scene({ measurements: [measurements[0]], nodes: [] }), 'chat', 1000);
    assert.deepEqual(sizing.blocked_by, [
      'no room for profile vllm-h100 (needs 2 GPUs, 16 cores)',
      'profile cpu-llama is not measured',
    ]);
    assert.equal(sizing.reaches_tokens_per_sec, 0);
  });

  it('max_replicas bounds the plan', () => {
    const sizing = sizeForThroughput(scene({ models: [{ ...chat, max_replicas: 2 }] }), 'chat', 10_000);
    assert.deepEqual(sizing.plan, [{ profile: 'vllm-h100', replicas: 2, tokens_per_sec: 2000 }]);
    assert.deepEqual(sizing.blocked_by, ['max_replicas 2 reached']);
  });

  it('a profile measured as unable to meet its SLO: says so, not that it is unmeasured', () => {
    const slow = profile('slow', gpus(1));
    const sizing = sizeForThroughput(
      scene({ models: [model('m', [slow])], measurements: [measured('m', 'slow', 0, 0)] }),
      'm',
      100,
    );
    assert.deepEqual(sizing.blocked_by, ['profile slow cannot meet its SLO']);
    assert.equal(sizing.fits, false);
  });

  it('counts the replicas of a lower claim it would preempt, and names them', () => {
    const idle = model('idle', [h100], { owner: 'team:ml', max_replicas: 4 });
    const idles = Array.from({ length: 4 }, (_, i) =>
      replica(`i${i}`, { model: 'idle', profile: h100, node: 'gpu-1' }),
    );
    const s = scene({
      models: [chat, idle],
      replicas: idles,
      quotas: [quota('team:ml', undefined, gpus(8))],
      load: { idle: { in_flight: 0, waiting: 0, reported_at: NOW } },
    });
    const sizing = sizeForThroughput(s, 'chat', 2000);
    assert.deepEqual(sizing.plan, [
      {
        profile: 'vllm-h100',
        replicas: 2,
        tokens_per_sec: 2000,
        preempts: ['i3 (priority 0, surplus)', 'i2 (priority 0, surplus)'],
      },
    ]);
    assert.equal(sizing.fits, true);
    const never = {
      ...s,
      quotas: [{ ...quota('team:ml', undefined, gpus(8)), preemption: 'never' as const }],
    };
    assert.deepEqual(sizeForThroughput(never, 'chat', 2000).plan[0]?.profile, 'cpu-llama');
  });

  it('changes nothing in the snapshot', () => {
    const s = scene({ replicas: running(1) });
    const before = structuredClone(s);
    sizeForThroughput(s, 'chat', 100_000);
    assert.deepEqual(s, before);
  });
});
