import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RESYNC_SPREAD } from '../../../src/domain/resync.ts';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { decideModel } from '../../../src/policy/decide.ts';
import { decidePass } from '../../../src/policy/pass.ts';
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

  it('ends when a backoff of its profiles ends, so that a crashed replica is replaced then and not at the resync', () => {
    // min_replicas 1 and its only profile backed off 5 s more: the model waits for the backoff alone.
    const wanted = { ...base, models: [{ ...idle, min_replicas: 1 }] };
    const view = buildView(wanted);
    const pass = decidePass(view, 'idle', memory(null, { cpu: view.now + 5000 }), RESYNC_MS);
    assert.deepEqual(pass.decision.pending, [{ code: 'backoff', profile: 'cpu' }]);
    // Spread by up to a tenth either way, the wait still ends at or just after the backoff's end.
    assert.ok(pass.resyncMs * (1 - RESYNC_SPREAD) >= 5000, `${pass.resyncMs}`);
    assert.ok(pass.resyncMs * (1 + RESYNC_SPREAD) <= 7000, `${pass.resyncMs}`);
    const over = decidePass(view, 'idle', memory(null, { cpu: view.now - 1 }), RESYNC_MS);
    assert.equal(over.resyncMs, RESYNC_MS, 'a backoff over is no reason to look sooner');
    const far = decidePass(view, 'idle', memory(null, { cpu: view.now + 100_000 }), RESYNC_MS);
    assert.equal(far.resyncMs, RESYNC_MS, 'nor one that ends after the resync');
  });
});
