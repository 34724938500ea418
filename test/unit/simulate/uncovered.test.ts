import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ModelSeries } from '../../../src/simulate/run.ts';
import { uncoveredLine, uncoveredStretches } from '../../../src/simulate/uncovered.ts';

/** A series from [load, ready slots, waiting] per tick. */
const series = (ticks: [number, number, number][]): ModelSeries => ({
  load: Int32Array.from(ticks.map(([l]) => l)),
  capacity: Int32Array.from(ticks.map(([, c]) => c)),
  waiting: Int32Array.from(ticks.map(([, , w]) => w)),
});

describe('uncovered stretches (what "covered" leaves out)', () => {
  it('finds each stretch of ticks with requests waiting, its length, its most in flight and its slots', () => {
    const stretches = uncoveredStretches(
      series([
        [2, 8, 0],
        [14, 8, 6],
        [12, 8, 4],
        [3, 8, 0],
        [40, 32, 8],
      ]),
      1000,
    );
    assert.deepEqual(stretches, [
      { fromMs: 1000, ms: 2000, mostInFlight: 14, slots: 8 },
      { fromMs: 4000, ms: 1000, mostInFlight: 40, slots: 32 },
    ]);
    assert.equal(
      uncoveredLine('code', stretches),
      'code: 3 s uncovered: at 0:01 for 2 s (14 in flight on 8 ready slots), at 0:04 for 1 s (40 in flight on 32 ready slots)',
    );
  });

  it('says so when no request waited', () => {
    const stretches = uncoveredStretches(series([[5, 8, 0]]), 1000);
    assert.deepEqual(stretches, []);
    assert.equal(uncoveredLine('chat', stretches), 'chat: no second uncovered');
  });
});
