import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ModelSeries } from '../../../src/simulate/run.ts';
import { NAMED_STRETCHES, uncoveredLine, uncoveredStretches } from '../../../src/simulate/uncovered.ts';

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

  it('names the longest stretches in time order and sums the shorter ones', () => {
    // Ten stretches of 1 to 10 ticks, each after a covered tick; the two shortest are summed.
    const ticks: [number, number, number][] = [];
    for (let len = 1; len <= 10; len++) {
      ticks.push([0, 8, 0]);
      for (let k = 0; k < len; k++) ticks.push([9 + len, 8, 1]);
    }
    const line = uncoveredLine('code', uncoveredStretches(series(ticks), 1000));
    assert.equal(NAMED_STRETCHES, 8);
    assert.match(line, /^code: 55 s uncovered: at 0:06 for 3 s \(12 in flight on 8 ready slots\), /);
    assert.match(line, /at 0:55 for 10 s \(19 in flight on 8 ready slots\), and 2 shorter \(3 s\)$/);
  });

  it('says so when no request waited', () => {
    const stretches = uncoveredStretches(series([[5, 8, 0]]), 1000);
    assert.deepEqual(stretches, []);
    assert.equal(uncoveredLine('chat', stretches), 'chat: no second uncovered');
  });
});
