import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { decideModel } from '../../../src/policy/decide.ts';
import { AT_REST_RESYNCS, resyncAfter } from '../../../src/policy/resync.ts';
import { buildView } from '../../../src/policy/view.ts';
import { cores, loadOf, memory, model, node, profile, replica, world } from './fixtures.ts';

const RESYNC_MS = 30_000;
const cpu = profile('cpu', cores(4), { default_concurrency: 8 });
const idle = model('idle', [cpu]);
const base = world({ models: [idle], nodes: [node('cpu-1', cores(64))] });

/** The resync after the model's decision on this snapshot. */
const resync = (s: Snapshot) => {
  const view = buildView(s);
  return resyncAfter(view, decideModel(view, 'idle', memory()), RESYNC_MS);
};

describe('the resync of a model', () => {
  it('is longer at rest: no replica, none wanted, nothing in flight', () => {
    assert.equal(resync(base), RESYNC_MS * AT_REST_RESYNCS);
    assert.equal(resync(loadOf(base, 'idle', 0)), RESYNC_MS * AT_REST_RESYNCS, 'a load of 0');
  });

  it('is the resync period as soon as anything may need a look', () => {
    const running = {
      ...base,
      replicas: [replica('idle-1', { model: 'idle', profile: cpu, node: 'cpu-1' })],
    };
    assert.equal(resync(running), RESYNC_MS, 'a replica runs');
    assert.equal(resync({ ...base, models: [{ ...idle, min_replicas: 1 }] }), RESYNC_MS, 'one is wanted');
    assert.equal(resync(loadOf(base, 'idle', 3)), RESYNC_MS, 'load in flight');
    const full = { ...loadOf(base, 'idle', 3), nodes: [node('cpu-1', cores(2))] };
    assert.equal(resync(full), RESYNC_MS, 'it waits for room');
  });
});
