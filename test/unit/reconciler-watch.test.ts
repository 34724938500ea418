// The worker's periodic check (src/reconcilers/reconciler-watch.ts): starts the reconcilers that are not
// running for the models in the store, counts those it started, and survives a check that fails.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Reconcilers } from '../../src/reconcilers/client.ts';
import { watchReconcilers } from '../../src/reconcilers/reconciler-watch.ts';
import type { Sql } from '../../src/store/db.ts';

/** A store that holds these models, or fails while `down` says so. */
const storeOf = (names: string[], state = { down: false }) =>
  (async () => {
    if (state.down) throw new Error('connect ECONNREFUSED');
    return names.map((name) => ({ name }));
  }) as unknown as Sql;

describe("the worker's check of the reconcilers", () => {
  it('starts those not running, reports them, and starts none of the others', async () => {
    const asked: string[][] = [];
    const started: string[][] = [];
    const reconcilers: Reconcilers = {
      tell: async () => assert.fail('running reconcilers are not signalled'),
      missing: async (models) => models.filter((model) => model !== 'running'),
      ensure: async (models) => {
        asked.push([...models]);
        return models.filter((model) => model !== 'refused'); // Temporal refused one start
      },
    };
    const warnings: string[] = [];
    const watch = watchReconcilers({
      sql: storeOf(['running', 'gone', 'refused']),
      reconcilers,
      periodMs: 20,
      onRestarted: (models) => started.push(models),
      log: { warn: (line: string) => warnings.push(line) },
    });
    await sleep(70);
    await watch.stop();
    assert.ok(asked.length >= 2, 'it checks again each period');
    assert.deepEqual(asked[0], ['gone', 'refused']);
    assert.deepEqual(started[0], ['gone']);
    assert.match(warnings[0], /^started the reconcilers of gone: they were not running$/);
  });

  it('logs a check that fails and checks again a period later', async () => {
    const state = { down: true };
    const checked: string[][] = [];
    const reconcilers: Reconcilers = {
      tell: async () => {},
      missing: async (models) => {
        checked.push([...models]);
        return [];
      },
      ensure: async () => [],
    };
    const warnings: string[] = [];
    const watch = watchReconcilers({
      sql: storeOf(['chat'], state),
      reconcilers,
      periodMs: 20,
      onRestarted: () => assert.fail('nothing was missing'),
      log: { warn: (line: string) => warnings.push(line) },
    });
    await sleep(50);
    state.down = false;
    await sleep(60);
    await watch.stop();
    assert.match(
      warnings[0],
      /^could not check that every model's reconciler runs: Error: connect ECONNREFUSED$/,
    );
    assert.ok(
      checked.some((models) => models[0] === 'chat'),
      'it checked again once the store answered',
    );
  });

  it('stops: no check after stop() resolves', async () => {
    let checks = 0;
    const reconcilers: Reconcilers = {
      tell: async () => {},
      missing: async () => {
        checks++;
        return [];
      },
      ensure: async () => [],
    };
    const watch = watchReconcilers({
      sql: storeOf(['chat']),
      reconcilers,
      periodMs: 10,
      onRestarted: () => {},
      log: { warn: () => {} },
    });
    await sleep(35);
    await watch.stop();
    const atStop = checks;
    await sleep(40);
    assert.equal(checks, atStop);
  });
});
