import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { modelFigures } from '../../../src/policy/model-figures.ts';
import { buildView } from '../../../src/policy/view.ts';
import { chat, chatScene, cpuLlama, gpus, h100, profile, replicaOn } from './fixtures.ts';

describe('modelFigures: what a model runs and serves now', () => {
  const retired = profile('retired', gpus(1));
  const view = buildView(
    chatScene({
      replicas: [
        replicaOn('ready', h100, 'gpu-1'),
        replicaOn('starting', cpuLlama, 'cpu-1', 'starting'),
        replicaOn('pending', h100, 'gpu-2', 'pending'),
        replicaOn('draining', h100, 'gpu-2', 'draining'),
        replicaOn('stopped', h100, 'gpu-3', 'stopped'),
        replicaOn('failed', h100, 'gpu-3', 'failed'),
        replicaOn('old-spec', retired, 'gpu-3'),
      ],
    }),
  );
  const figures = modelFigures(view, chat);
  const ids = (replicas: { id: string }[]) => replicas.map((r) => r.id);

  it('its profiles in trial order, not in the order of its spec', () => {
    const reversed = { ...chat, profiles: [cpuLlama, h100] };
    assert.deepEqual(
      modelFigures(view, reversed).profiles.map((p) => p.name),
      ['vllm-h100', 'cpu-llama'],
    );
  });

  it('serving: pending, starting and ready replicas, oldest first; settling: those not ready yet', () => {
    assert.deepEqual(ids(figures.serving), ['ready', 'starting', 'pending', 'old-spec']);
    assert.deepEqual(ids(figures.settling), ['starting', 'pending']);
  });

  it('C sums the concurrency at SLO: measured, else declared, else the default (a profile gone too)', () => {
    // vllm-h100 measured 10 (twice), cpu-llama declared 4, retired the default 8.
    assert.equal(figures.capacity, 10 + 4 + 10 + 8);
    assert.equal(figures.concurrency(figures.serving[3]), 8);
  });

  it('throughput counts measured profiles only', () => {
    assert.equal(figures.tokensPerSec, 2000);
    assert.equal(figures.throughput(figures.serving[1]), 0);
  });
});
