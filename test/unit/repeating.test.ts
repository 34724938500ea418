// Repeating (src/repeating.ts): the loop the agent's heartbeat and scrape and the drivers' node checks
// share. Runs on the real clock with short periods.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Repeating } from '../../src/repeating.ts';

describe('Repeating: a task run again and again until stopped', () => {
  it('never runs twice at once, even when a run outlasts the period', async () => {
    let running = 0;
    let most = 0;
    let runs = 0;
    const loop = new Repeating(
      async () => {
        running++;
        most = Math.max(most, running);
        await sleep(15);
        running--;
        runs++;
      },
      1,
      (error) => assert.fail(String(error)),
    );
    loop.start();
    await sleep(120);
    await loop.stop();
    assert.equal(most, 1);
    assert.ok(runs >= 2, `ran ${runs} times`);
  });

  it('passes a failed run to `failed`, and the next run follows', async () => {
    const failures: unknown[] = [];
    let runs = 0;
    const loop = new Repeating(
      async () => {
        runs++;
        if (runs === 1) throw new Error('store down');
      },
      1,
      (error) => failures.push(error),
    );
    loop.start();
    while (runs < 3) await sleep(5);
    await loop.stop();
    assert.deepEqual(
      failures.map((e) => (e as Error).message),
      ['store down'],
    );
  });

  it('stop waits for the run under way, and no run starts after it', async () => {
    let ended = false;
    let started = 0;
    const loop = new Repeating(
      async () => {
        started++;
        await sleep(40);
        ended = true;
      },
      1,
      () => {},
    );
    loop.start();
    while (started === 0) await sleep(2);
    await loop.stop();
    assert.equal(ended, true);
    const after = started;
    await sleep(30);
    assert.equal(started, after);
  });
});
