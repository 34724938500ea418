import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { putModel } from '../../src/store/models.ts';
import { reconcilerId, stateQuery } from '../../src/workflows/messages.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

describe('creating a model starts its reconciler', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({
      worker: true,
      nodes: [
        { name: 'gpu-1', capacity: { gpus: 8, cores: 64, memory_gib: 512 }, gpu_model: 'H100', labels: {} },
      ],
    });
  });
  after(() => stack.stop());

  it('signalWithStart starts reconcile:<model>, whose pass reads the store and records a decision', async () => {
    const put = await stack.call('PUT', '/api/v1/models/chat', {
      min_replicas: 1,
      max_replicas: 2,
      profiles: [
        { name: 'h100', priority: 1, resources: { gpus: 1 }, gpu_model: 'H100', default_concurrency: 4 },
      ],
    });
    assert.equal(put.status, 201, JSON.stringify(put.body));
    const handle = stack.temporal.workflow.getHandle(reconcilerId('chat'));
    // The worker's first workflow, which loads the workflow bundle first: a CI run on a busy machine
    // found no pass within 20 s (its cause unseen: the queries failed), and the next test none either.
    const state = await eventually(
      'a pass of the reconciler',
      async () => {
        const view = await handle.query(stateQuery);
        return view.passes > 0 && view.lastDecision ? view : undefined;
      },
      60_000,
    );
    assert.equal(state.model, 'chat');
    assert.ok(state.lastDecision?.reason, 'the query returns the last decision');
    const decisions = await stack.call('GET', '/api/v1/models/chat/decisions');
    // min_replicas 1 from zero replicas: the first decision places one replica on the only node.
    const replicas = await eventually('a ready replica', async () => {
      const answer = await stack.call('GET', '/api/v1/replicas?model=chat');
      return answer.body.length === 1 && answer.body[0].state === 'ready' ? answer.body : undefined;
    });
    assert.equal(replicas[0].node, 'gpu-1');
    assert.equal(decisions.status, 200);
    assert.match(decisions.body.at(-1).reason, /scale up: 0 replicas < min_replicas 1; placed h100 on gpu-1/);
  });

  it('the Temporal UI can list and explain it: search attributes and current details', async () => {
    const handle = stack.temporal.workflow.getHandle(reconcilerId('chat'));
    const described = await eventually('search attributes upserted', async () => {
      const d = await handle.describe();
      return d.searchAttributes.LlmgwStatus?.[0] === 'steady' ? d : undefined;
    });
    assert.deepEqual(described.searchAttributes.LlmgwModel, ['chat']);
    assert.deepEqual(described.searchAttributes.LlmgwReplicas, [1]);
    const listed = await eventually('the visibility query finds it', async () => {
      const found = [];
      for await (const info of stack.temporal.workflow.list({
        query: `LlmgwModel = "chat" AND TaskQueue = "${stack.config.taskQueue}"`,
      }))
        found.push(info.workflowId);
      return found.length > 0 ? found : undefined;
    });
    assert.deepEqual(listed, [reconcilerId('chat')]);
    const metadata = await handle.query<{ currentDetails?: string }>('__temporal_workflow_metadata');
    assert.match(metadata.currentDetails ?? '', /steady/);
  });
});

describe('a reconciler keeps its history small', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ worker: true, env: { LLMGW_RESYNC_S: '0.2' } });
  });
  after(() => stack.stop());

  it('continues as new after its bounded number of passes, carrying its state', async () => {
    // Stored directly, so that this test starts the reconciler itself with low bounds.
    await putModel(stack.sql, {
      name: 'tiny',
      owner: null,
      min_replicas: 0,
      max_replicas: 1,
      profiles: [{ name: 'cpu', priority: 1, resources: { cores: 1 } }],
    });
    const started = await stack.temporal.workflow.signalWithStart('reconcileModel', {
      workflowId: reconcilerId('tiny'),
      taskQueue: stack.config.taskQueue,
      args: [{ model: 'tiny', bounds: { passes: 3, signals: 100 } }],
      signal: 'specChanged',
    });
    const firstRun = (await started.describe()).runId;
    const handle = stack.temporal.workflow.getHandle(reconcilerId('tiny'));
    // A fresh worker's first workflow waits for its bundle and first pass: 60 s on a busy machine
    // (CI's run beside a compile did not see the second run within the default 20 s).
    const next = await eventually(
      'a second run',
      async () => {
        const d = await handle.describe();
        return d.runId !== firstRun ? d : undefined;
      },
      60_000,
    );
    assert.equal(next.status.name, 'RUNNING');
    const view = await handle.query(stateQuery);
    assert.equal(view.model, 'tiny');
    assert.ok(view.lastDecision, 'the last decision is carried into the new run');
  });
});
