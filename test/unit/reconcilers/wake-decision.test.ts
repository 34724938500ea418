// When a load change wakes a reconciler is decided in one place, src/policy/load-zone.ts: wakesReconciler
// (on a report, for the load signals and the simulator) and reportsAtOnce (for a gateway's counts, which
// wake it through a report). The pacers around them only wait; they do not decide again.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import fc from 'fast-check';
import {
  type LoadStanding,
  loadZone,
  reportsAtOnce,
  wakesReconciler,
} from '../../../src/policy/load-zone.ts';
import { SignalPacer } from '../../../src/reconcilers/load-signals.ts';

const SRC = join(import.meta.dirname, '..', '..', '..', 'src');
const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sources(join(dir, entry.name))
      : /\.tsx?$/.test(entry.name)
        ? [join(dir, entry.name)]
        : [],
  );

describe('the wake decision is one function', () => {
  it('only policy/load-zone.ts weighs zones; the gateway, load signals and simulator call it', () => {
    const weighing = /zone\s*[!=]==|[!=]==\s*'(above|below|within)'|function rose\b/;
    const home = join(SRC, 'policy', 'load-zone.ts');
    const others = sources(SRC).filter((file) => file !== home && weighing.test(readFileSync(file, 'utf8')));
    assert.deepEqual(
      others.map((file) => relative(SRC, file)),
      [],
    );
    for (const [file, name] of [
      ['gateway/load-reporter.ts', 'reportsAtOnce'],
      ['reconcilers/load-signals.ts', 'wakesReconciler'],
      ['simulate/llmgw.ts', 'wakesReconciler'],
    ]) {
      const text = readFileSync(join(SRC, file), 'utf8');
      assert.match(
        text,
        new RegExp(`import \\{[^}]*\\b${name}\\b[^}]*\\} from '[./]*policy/load-zone\\.ts'`),
        file,
      );
    }
  });

  it("a gateway's count goes at once exactly when it rises from none or over the capacity last answered", () => {
    fc.assert(
      fc.property(
        fc.nat(50),
        fc.nat(50),
        fc.option(fc.nat(50), { nil: undefined }),
        (before, after, capacity) => {
          const crosses = capacity !== undefined && before <= capacity && after > capacity;
          assert.equal(reportsAtOnce(before, after, capacity), before === 0 ? after > 0 : crosses);
          // Over the capacity is the zone `above` of one pool of that capacity.
          if (capacity !== undefined) assert.equal(loadZone(after, [capacity]) === 'above', after > capacity);
        },
      ),
    );
  });
});

describe('the load signals pace what wakesReconciler decides', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'Date'], now: 0 }));
  afterEach(() => mock.timers.reset());

  const standing = fc.record({
    zone: fc.constantFrom('above' as const, 'below' as const, 'within' as const),
    capacity: fc.constantFrom(0, 8, 16),
    inFlight: fc.nat(40),
  });

  it('tells or holds a standing exactly when wakesReconciler says it wakes the reconciler last told', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(standing, fc.nat(400)), { maxLength: 30 }), async (steps) => {
        let last: LoadStanding | undefined;
        const pacer = new SignalPacer(async () => {}, Date.now, { warn() {} });
        for (const [next, wait] of steps) {
          const pacing = await pacer.weigh('m', next);
          assert.equal(pacing === 'unchanged', !wakesReconciler(last, next));
          if (pacing === 'told') last = next;
          if (pacing === 'held') {
            // Told once the gap has passed.
            mock.timers.tick(1_000);
            last = next;
          }
          mock.timers.tick(wait);
        }
      }),
    );
  });
});
