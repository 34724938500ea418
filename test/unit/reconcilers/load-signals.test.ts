// When a load report's change reaches the model's reconciler (src/reconcilers/load-signals.ts): at most
// every MIN_SIGNAL_GAP_MS, and a change within the gap is not lost when no report follows it.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import type { LoadStanding, LoadZone } from '../../../src/policy/load-zone.ts';
import { MIN_SIGNAL_GAP_MS, SignalPacer } from '../../../src/reconcilers/load-signals.ts';

const standing = (zone: LoadZone, inFlight: number): LoadStanding => ({ zone, inFlight, capacity: 16 });

/** A pacer on mocked timers; `told` lists when the reconciler of `m` was told, in ms since start. */
function setUp() {
  const told: number[] = [];
  const pacer = new SignalPacer(async () => void told.push(Date.now()), Date.now, { warn() {} });
  return { pacer, told };
}

describe('SignalPacer', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 }));
  afterEach(() => mock.timers.reset());

  it('tells a crossing within the gap once the gap has passed, though no report follows', async () => {
    const { pacer, told } = setUp();
    assert.equal(await pacer.weigh('m', standing('within', 1)), 'told');
    mock.timers.tick(5);
    assert.equal(await pacer.weigh('m', standing('above', 17)), 'held', 'within the gap');
    mock.timers.tick(MIN_SIGNAL_GAP_MS - 6);
    assert.deepEqual(told, [0]);
    mock.timers.tick(1);
    assert.deepEqual(told, [0, MIN_SIGNAL_GAP_MS]);
    assert.equal(await pacer.weigh('m', standing('above', 17)), 'unchanged', 'already told');
  });

  it('tells several changes within the gap once, and none that went back to what was told', async () => {
    const { pacer, told } = setUp();
    await pacer.weigh('m', standing('within', 1));
    mock.timers.tick(10);
    await pacer.weigh('m', standing('above', 17));
    await pacer.weigh('m', standing('above', 20));
    mock.timers.tick(MIN_SIGNAL_GAP_MS - 10);
    assert.deepEqual(told, [0, MIN_SIGNAL_GAP_MS]);
    mock.timers.tick(10);
    await pacer.weigh('m', standing('within', 3));
    await pacer.weigh('m', standing('above', 18));
    mock.timers.tick(MIN_SIGNAL_GAP_MS);
    assert.deepEqual(told, [0, MIN_SIGNAL_GAP_MS], 'back above, as told: nothing to tell');
  });

  it('tells at once a change after the gap, and keeps models apart', async () => {
    const { pacer, told } = setUp();
    await pacer.weigh('m', standing('within', 1));
    assert.equal(await pacer.weigh('n', standing('within', 1)), 'told');
    mock.timers.tick(MIN_SIGNAL_GAP_MS);
    assert.equal(await pacer.weigh('m', standing('above', 17)), 'told');
    assert.deepEqual(told, [0, 0, MIN_SIGNAL_GAP_MS]);
  });
});
