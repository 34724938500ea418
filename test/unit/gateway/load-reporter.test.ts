import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import {
  LoadReporter,
  REFRESH_EVERY_MS,
  REPORT_GAP_MS,
  refreshEvery,
} from '../../../src/gateway/load-reporter.ts';

/**
 * A reporter on mocked timers; `sent` lists each report as [ms since start, in flight, waiting],
 * `since` each report's waitingSince, and `refreshed` when every report was marked fresh.
 */
function setUp(capacity?: number, failFirst = false) {
  const sent: [number, number, number][] = [];
  const since: (number | undefined)[] = [];
  const refreshed: number[] = [];
  let failures = failFirst ? 1 : 0;
  const reporter = new LoadReporter(
    async (_model, inFlight, waiting, waitingSince) => {
      if (failures-- > 0) throw new Error('store down');
      sent.push([Date.now(), inFlight, waiting]);
      since.push(waitingSince);
      return capacity;
    },
    { everyMs: REFRESH_EVERY_MS, run: async () => void refreshed.push(Date.now()) },
    { warn() {} },
  );
  return { reporter, sent, since, refreshed };
}

/** Moves the mocked clock on, letting the reports' promises settle on the way. */
async function pass(ms: number) {
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  for (let step = 0; step < ms; step += 10) {
    await settle();
    mock.timers.tick(10);
  }
  await settle();
}

describe('LoadReporter', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'Date'], now: 0 }));
  afterEach(() => mock.timers.reset());

  it('sends the first change at once, then the latest counts at most every REPORT_GAP_MS', async () => {
    const { reporter, sent } = setUp();
    reporter.change('m', 1, 0);
    await pass(10);
    for (let i = 0; i < 5; i++) reporter.change('m', 1, 0);
    reporter.change('m', 0, 2);
    await pass(REPORT_GAP_MS + 20);
    assert.deepEqual(sent, [
      [0, 1, 0],
      [REPORT_GAP_MS, 6, 2],
    ]);
  });

  it('sends nothing once stopped: the requests its gateway closes while it stops end in no report', async () => {
    const { reporter, sent } = setUp();
    reporter.change('m', 2, 0);
    await pass(10);
    reporter.stop();
    // A stopping gateway closes its connections after its reporter stops: their requests end then.
    reporter.change('m', -2, 0);
    reporter.change('m', 1, 0);
    await pass(REPORT_GAP_MS * 4);
    assert.deepEqual(sent, [[0, 2, 0]]);
    assert.deepEqual([...reporter.inFlightCounts()], [['m', 1]], 'it still counts');
  });

  it('sets one timer between two reports, however many requests start and end (not one each), and sends nothing for a load back where it was', async () => {
    const { reporter, sent } = setUp();
    reporter.change('m', 3, 0);
    await pass(10);
    const timers = mock.method(globalThis, 'setTimeout');
    for (let i = 0; i < 100; i++) {
      reporter.change('m', 1, 0);
      reporter.change('m', -1, 0);
    }
    reporter.change('m', 1, 0);
    assert.equal(timers.mock.callCount(), 1);
    reporter.change('m', -1, 0);
    await pass(REPORT_GAP_MS + 20);
    timers.mock.restore();
    assert.deepEqual(sent, [[0, 3, 0]]);
  });

  it('sends at once a rise over the capacity at SLO, however soon; a fall waits for the gap', async () => {
    const { reporter, sent } = setUp(4);
    reporter.change('m', 4, 0);
    await pass(20);
    reporter.change('m', 1, 0); // 5 > 4: over the capacity
    await pass(20);
    reporter.change('m', -5, 0); // none
    await pass(REPORT_GAP_MS);
    assert.deepEqual(sent, [
      [0, 4, 0],
      [20, 5, 0],
      [20 + REPORT_GAP_MS, 0, 0],
    ]);
  });

  it('does not report every request of a model going between none and one', async () => {
    const { reporter, sent } = setUp(4);
    for (let i = 0; i < 100; i++) {
      reporter.change('m', 1, 0);
      await pass(10);
      reporter.change('m', -1, 0);
      await pass(10);
    }
    await pass(REPORT_GAP_MS);
    assert.ok(sent.length <= 2 * Math.ceil(2000 / REPORT_GAP_MS) + 2, `${sent.length} reports in 2 s`);
    assert.deepEqual(sent.at(-1)?.slice(1), [0, 0], 'the last says none');
  });

  it("marks every report fresh every REFRESH_EVERY_MS, an idle model's none included, without sending any again", async () => {
    // A none gone stale would leave the idle model's load unknown, and it would never scale down.
    const { reporter, sent, refreshed } = setUp();
    reporter.change('busy', 3, 0);
    reporter.change('idle', 1, 0);
    reporter.change('idle', -1, 0);
    await pass(2 * REFRESH_EVERY_MS + 100);
    assert.deepEqual(refreshed, [REFRESH_EVERY_MS, 2 * REFRESH_EVERY_MS]);
    assert.deepEqual(
      sent.map(([, inFlight, waiting]) => [inFlight, waiting]),
      [
        [3, 0],
        [1, 0],
        [0, 0],
      ],
      'each change once, then silence',
    );
    reporter.stop();
  });

  it('refreshes well within the staleness bound', () => {
    assert.equal(refreshEvery(60_000), REFRESH_EVERY_MS);
    assert.equal(refreshEvery(3_000), 1_000);
  });

  it('refreshes nothing before it has reported anything', async () => {
    const { refreshed } = setUp();
    await pass(REFRESH_EVERY_MS + 100);
    assert.deepEqual(refreshed, []);
  });

  it('tries a failed report again a second later', async () => {
    const { reporter, sent } = setUp(undefined, true);
    reporter.change('m', 2, 0);
    await pass(1100);
    assert.deepEqual(sent, [[1000, 2, 0]]);
  });

  it('sends since when requests wait: from the moment the first began to, kept while any wait, dropped when none do; the next queue gets its own', async () => {
    const { reporter, sent, since } = setUp();
    reporter.change('m', 1, 0);
    await pass(100);
    reporter.change('m', 0, 1); // 100: a queue begins
    await pass(200);
    reporter.change('m', 0, 1); // 300: it grows
    await pass(300);
    reporter.change('m', 1, -2); // 600: it empties (one ends, both waiting get a slot)
    await pass(300);
    reporter.change('m', 0, 1); // 900: a new queue
    await pass(200);
    reporter.change('m', 1, -1); // 1100: it empties, with nothing to report (the total holds)...
    await pass(50);
    reporter.change('m', 0, 1); // 1150: ...and another begins before the next report
    await pass(REPORT_GAP_MS);
    assert.deepEqual(sent, [
      [0, 1, 0],
      [REPORT_GAP_MS, 1, 1],
      [2 * REPORT_GAP_MS, 1, 2],
      [3 * REPORT_GAP_MS, 2, 0],
      [4 * REPORT_GAP_MS, 2, 1],
      [5 * REPORT_GAP_MS, 3, 1],
    ]);
    assert.deepEqual(since, [undefined, 100, 100, undefined, 900, 1150]);
  });

  it('sends no time once none wait, though the report of them waiting failed', async () => {
    const { reporter, sent, since } = setUp(undefined, true);
    reporter.change('m', 0, 2); // 0: sent, and refused
    await pass(500);
    reporter.change('m', 2, -2); // 500: both got a slot; what it tries next says none wait
    await pass(600);
    assert.deepEqual(sent, [[500, 2, 0]]);
    assert.deepEqual(since, [undefined]);
  });
});
