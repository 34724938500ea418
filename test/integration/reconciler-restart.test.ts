// A reconciler that stops while its model exists (terminated in the Temporal UI, a bug) is started
// again: by the API's next touch of the model (a load report) and by the worker's periodic check; while
// it is missing, /readyz and llmgw_reconcilers_missing count it. Real API, worker, Temporal and Postgres.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { MIN_ENSURE_GAP_MS } from '../../src/reconcilers/load-signals.ts';
import { newId } from '../../src/store/ids.ts';
import { reconcilerId, stateQuery } from '../../src/workflows/messages.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

/** A model with nothing to place, so that only its reconciler's life matters. */
const quietModel = { max_replicas: 1, profiles: [{ name: 'cpu', resources: { cores: 1 } }] };

/** Creates a model through the API and returns its reconciler's run once it has made a pass. */
async function modelWithReconciler(stack: Stack, name: string): Promise<string> {
  const put = await stack.call('PUT', `/api/v1/models/${name}`, quietModel);
  assert.equal(put.status, 201, JSON.stringify(put.body));
  const handle = stack.temporal.workflow.getHandle(reconcilerId(name));
  await eventually(`${name}'s first pass`, async () => (await handle.query(stateQuery)).passes > 0);
  return (await handle.describe()).runId;
}

/** Terminates this run of the reconciler, as the Temporal UI's button does. */
async function terminate(stack: Stack, name: string, runId: string): Promise<void> {
  const handle = stack.temporal.workflow.getHandle(reconcilerId(name), runId);
  await handle.terminate('terminated by a test, as in the Temporal UI');
  assert.equal((await handle.describe()).status.name, 'TERMINATED');
}

/** The run of the model's reconciler if it runs, else undefined. */
async function runningRun(stack: Stack, name: string): Promise<string | undefined> {
  const described = await stack.temporal.workflow.getHandle(reconcilerId(name)).describe();
  return described.status.name === 'RUNNING' ? described.runId : undefined;
}

const missingGauge = (text: string) => /^llmgw_reconcilers_missing (\d+)$/m.exec(text)?.[1];

describe("a load report starts a model's stopped reconciler again", () => {
  let stack: Stack;
  const name = `restart-load-${newId().slice(0, 6)}`;
  before(async () => {
    // The worker's own check waits an hour here: only the API's touch can start the reconciler.
    stack = await startStack({ worker: true, env: { LLMGW_RECONCILER_CHECK_S: '3600' } });
  });
  after(() => stack.stop());

  it('while it is missing, /readyz and the metric count it; the next report starts it', async () => {
    const firstRun = await modelWithReconciler(stack, name);
    const first = await stack.call('POST', `/api/v1/models/${name}/load`, { in_flight: 0 });
    assert.equal(first.status, 202, JSON.stringify(first.body));
    assert.deepEqual(await stack.call('GET', '/readyz'), {
      status: 200,
      body: { ok: true, store: 'up', temporal: 'up', reconcilers_missing: 0 },
    });

    await terminate(stack, name, firstRun);
    const readyz = await eventually('/readyz counts the missing reconciler', async () => {
      const answer = await stack.call('GET', '/readyz');
      return answer.body.reconcilers_missing === 1 ? answer : undefined;
    });
    assert.equal(readyz.status, 200, 'the API itself is ready');
    assert.equal(missingGauge(await stack.scrape()), '1');

    // The same load as before crosses no threshold: the report signals nothing, yet starts the reconciler.
    await sleep(MIN_ENSURE_GAP_MS);
    const second = await stack.call('POST', `/api/v1/models/${name}/load`, { in_flight: 0 });
    assert.equal(second.status, 202, JSON.stringify(second.body));
    assert.equal(second.body.signalled, false);
    const newRun = await runningRun(stack, name);
    assert.ok(newRun, 'the report started the reconciler');
    assert.notEqual(newRun, firstRun);
    await eventually('/readyz counts none missing', async () => {
      const answer = await stack.call('GET', '/readyz');
      return answer.body.reconcilers_missing === 0;
    });
    assert.equal(missingGauge(await stack.scrape()), '0');
  });
});

describe("the worker's periodic check starts a stopped reconciler again", () => {
  let stack: Stack;
  const name = `restart-check-${newId().slice(0, 6)}`;
  before(async () => {
    stack = await startStack({ worker: true, env: { LLMGW_RECONCILER_CHECK_S: '0.5' } });
  });
  after(() => stack.stop());

  it('without any touch of the API, and counts it in llmgw_reconcilers_restarted_total', async () => {
    const firstRun = await modelWithReconciler(stack, name);
    await terminate(stack, name, firstRun);
    const newRun = await eventually('the check starts the reconciler', () => runningRun(stack, name));
    assert.notEqual(newRun, firstRun);
    await eventually('a pass of the new run', async () => {
      const view = await stack.temporal.workflow.getHandle(reconcilerId(name)).query(stateQuery);
      return view.passes > 0;
    });
    const restarted = /^llmgw_reconcilers_restarted_total (\d+)$/m.exec(await stack.scrape())?.[1];
    assert.ok(Number(restarted) >= 1, `llmgw_reconcilers_restarted_total ${restarted}`);
  });
});
