// Many deadlines on one timer (src/gateway/deadlines.ts): each falls due once, not before its time and
// not after it, whatever was set, moved and cleared meanwhile.
import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import fc from 'fast-check';
import { type Deadlined, Deadlines } from '../../../src/gateway/deadlines.ts';

/** The mocked clock moved on a millisecond at a time: a timer's callback reads the end of its tick. */
function advance(ms: number) {
  for (let i = 0; i < ms; i++) mock.timers.tick(1);
}

/** Deadlines on the mocked clock. */
const mockedDeadlines = () => new Deadlines(() => Date.now());

/** An item that notes when it fell due, on the mocked clock. */
function item(name: string, fell: [string, number][]): Deadlined {
  return { dueAt: 0, due: () => fell.push([name, Date.now()]) };
}

describe('deadlines on one timer', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 }));
  afterEach(() => mock.timers.reset());

  it('each falls due once, at its time, in the order of the times', () => {
    const fell: [string, number][] = [];
    const deadlines = mockedDeadlines();
    const [a, b, c] = ['a', 'b', 'c'].map((name) => item(name, fell));
    deadlines.set(a, 100);
    advance(10);
    deadlines.set(b, 100);
    deadlines.set(c, 20);
    advance(19);
    assert.deepEqual(fell, []);
    advance(1);
    assert.deepEqual(fell, [['c', 30]]);
    advance(1000);
    assert.deepEqual(fell, [
      ['c', 30],
      ['a', 100],
      ['b', 110],
    ]);
  });

  it('one cleared never falls due, and the others still do (the first cleared included)', () => {
    const fell: [string, number][] = [];
    const deadlines = mockedDeadlines();
    const [a, b] = ['a', 'b'].map((name) => item(name, fell));
    deadlines.set(a, 50);
    deadlines.set(b, 80);
    deadlines.clear(a);
    deadlines.clear(a); // twice is nothing more
    advance(200);
    assert.deepEqual(fell, [['b', 80]]);
  });

  it('set again, it falls due at its new time only, even moved to another list', () => {
    const fell: [string, number][] = [];
    const first = mockedDeadlines();
    const second = mockedDeadlines();
    const a = item('a', fell);
    first.set(a, 50);
    advance(40);
    first.set(a, 50);
    advance(40);
    second.set(a, 100);
    first.clear(a); // not on this list: nothing
    advance(99);
    assert.deepEqual(fell, []);
    advance(1);
    assert.deepEqual(fell, [['a', 180]]);
  });

  it('one that falls due may set deadlines again, its own among them', () => {
    const fell: [string, number][] = [];
    const deadlines = mockedDeadlines();
    const again: Deadlined = {
      dueAt: 0,
      due: () => {
        fell.push(['again', Date.now()]);
        if (fell.length < 3) deadlines.set(again, 10);
      },
    };
    deadlines.set(again, 10);
    advance(100);
    assert.deepEqual(fell, [
      ['again', 10],
      ['again', 20],
      ['again', 30],
    ]);
  });

  it('whatever is set, moved and cleared, each falls due exactly when its last time comes (property)', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), which: fc.nat(4), ms: fc.nat(300) }),
      fc.record({ kind: fc.constant('clear' as const), which: fc.nat(4) }),
      fc.record({ kind: fc.constant('wait' as const), ms: fc.nat(100) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        mock.timers.reset();
        mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 });
        const fell: [string, number][] = [];
        const deadlines = mockedDeadlines();
        const items = [0, 1, 2, 3, 4].map((i) => item(String(i), fell));
        // The model: when each item falls due, if it does.
        const due = new Map<number, number>();
        const expected: [string, number][] = [];
        const waitUntil = (until: number) => {
          for (const [which, at] of [...due].filter(([, at]) => at <= until)) {
            expected.push([String(which), at]);
            due.delete(which);
          }
          advance(until - Date.now());
        };
        for (const step of ops) {
          if (step.kind === 'set') {
            deadlines.set(items[step.which], step.ms);
            // As a timer of 0 does, one due now falls at the next millisecond.
            due.set(step.which, Date.now() + Math.max(1, step.ms));
          } else if (step.kind === 'clear') {
            deadlines.clear(items[step.which]);
            due.delete(step.which);
          } else waitUntil(Date.now() + step.ms);
        }
        waitUntil(Date.now() + 400);
        // Items due at the same time may fall in either order; the times are what must match.
        const byTime = (xs: [string, number][]) =>
          [...xs].sort((x, y) => x[1] - y[1] || x[0].localeCompare(y[0]));
        assert.deepEqual(byTime(fell), byTime(expected));
      }),
      { numRuns: 100 },
    );
  });
});
