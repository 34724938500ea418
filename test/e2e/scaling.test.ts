import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  activeReplicas,
  decisionSaying,
  decisions,
  FAST,
  gpuNode,
  gpuProfile,
  ok,
  settledAt,
} from '../support/cluster.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

/** Through the HTTP API only, against the real worker, Temporal dev server and Postgres. */
describe('a model is kept at the replicas its load needs', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ worker: true, env: FAST, nodes: [gpuNode('gpu-1', 8), gpuNode('gpu-2', 8)] });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Acme' });
    await ok(stack, 'POST', '/api/v1/teams', { org: 'Acme', name: 'ml' });
  });
  after(() => stack.stop());

  it('scales up on load past the measured capacity, and down only when the rest stay under 70% after the window', async () => {
    await ok(stack, 'PUT', '/api/v1/models/chat', {
      owner: 'team:Acme/ml',
      min_replicas: 1,
      max_replicas: 6,
      profiles: [gpuProfile('h100', 1, { default_concurrency: 4 })],
    });
    await settledAt(stack, 'chat', 1);
    // Measured: one replica serves 10 in flight within its SLO (the declared 4 no longer counts).
    await ok(stack, 'PUT', '/api/v1/measurements', {
      model: 'chat',
      profile: 'h100',
      max_concurrency_at_slo: 10,
      throughput_tok_per_sec: 800,
      slo: { ttft_p95_ms: 500, tpot_p95_ms: 50 },
    });
    await ok(stack, 'POST', '/api/v1/models/chat/load', { in_flight: 25 });
    await settledAt(stack, 'chat', 3); // 30 at SLO >= 25
    const up = await decisionSaying(stack, 'chat', /scale up: 25 in flight > 20 at SLO on 2 replicas/);
    assert.equal(up.action, 'place');

    // 5 in flight: 5 <= 0.7 * 20 and then 5 <= 0.7 * 10, but only after the 2 s window; min 1 stays.
    const dropped = Date.now();
    await ok(stack, 'POST', '/api/v1/models/chat/load', { in_flight: 5 });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    assert.equal((await activeReplicas(stack, 'chat')).length, 3, 'nothing is taken back inside the window');
    await settledAt(stack, 'chat', 1, 30_000);
    assert.ok(Date.now() - dropped >= 2000);
    const down = (await decisions(stack, 'chat')).filter((d) => d.action === 'remove');
    assert.equal(down.length, 2);
    assert.match(down[0].reason, /scale down/);
  });

  it('stops at max_replicas and says so', async () => {
    await ok(stack, 'PUT', '/api/v1/models/capped', {
      min_replicas: 0,
      max_replicas: 2,
      profiles: [gpuProfile('h100', 1, { default_concurrency: 2 })],
    });
    await ok(stack, 'POST', '/api/v1/models/capped/load', { in_flight: 50 });
    await settledAt(stack, 'capped', 2);
    await decisionSaying(stack, 'capped', /max_replicas 2 reached/);
    const model = await ok(stack, 'GET', '/api/v1/models/capped');
    assert.equal(model.status, 'pending');
  });

  it('keeps min_replicas whatever the load, and an unknown load scales nothing', async () => {
    await ok(stack, 'PUT', '/api/v1/models/steady', {
      min_replicas: 2,
      max_replicas: 4,
      profiles: [gpuProfile('h100', 1, { default_concurrency: 4 })],
    });
    await settledAt(stack, 'steady', 2);
    // No load report ever: capacity 8 is not exceeded by anything known, so it stays at 2.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal((await activeReplicas(stack, 'steady')).length, 2);
  });

  it('a profile that cannot run falls back to the next one', async () => {
    await ok(stack, 'PUT', '/api/v1/models/fallback', {
      min_replicas: 1,
      max_replicas: 1,
      profiles: [{ ...gpuProfile('b200', 1), gpu_model: 'B200', priority: 20 }, gpuProfile('h100', 1)],
    });
    const [replica] = await settledAt(stack, 'fallback', 1);
    assert.equal(replica.profile, 'h100');
    const placed = await decisionSaying(stack, 'fallback', /placed h100/);
    assert.ok(JSON.stringify(placed.inputs.rejected).includes('b200'), JSON.stringify(placed.inputs));
  });

  it('deleting a model drains and stops its replicas, then ends its reconciler', async () => {
    await ok(stack, 'PUT', '/api/v1/models/doomed', {
      min_replicas: 2,
      max_replicas: 2,
      profiles: [gpuProfile('h100', 1)],
    });
    await settledAt(stack, 'doomed', 2);
    await ok(stack, 'DELETE', '/api/v1/models/doomed');
    await eventually(
      'the model is gone',
      async () => (await stack.call('GET', '/api/v1/models/doomed')).status === 404,
    );
    // Its replicas stopped, and went with it: a model created again under the name lists none of them.
    const replicas = await ok<{ state: string }[]>(stack, 'GET', '/api/v1/replicas?model=doomed');
    assert.deepEqual(replicas, []);
    const handle = stack.temporal.workflow.getHandle('reconcile:doomed');
    await eventually(
      'the reconciler ended',
      async () => (await handle.describe()).status.name === 'COMPLETED',
    );
  });
});

describe('a profile whose replicas keep failing to start', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ worker: true, env: FAST, nodes: [gpuNode('gpu-1', 8)] });
  });
  after(() => stack.stop());

  it('is backed off, and the next profile runs meanwhile', async () => {
    await ok(stack, 'PUT', '/api/v1/models/flaky', {
      min_replicas: 1,
      max_replicas: 1,
      profiles: [
        { ...gpuProfile('broken', 1), priority: 20, engine: { kind: 'sim', fail_start: true } },
        gpuProfile('sound', 1),
      ],
    });
    const [running] = await settledAt(stack, 'flaky', 1);
    assert.equal(running.profile, 'sound');
    const all = await ok<{ profile: string; state: string }[]>(stack, 'GET', '/api/v1/replicas?model=flaky');
    assert.ok(
      all.some((r) => r.profile === 'broken' && r.state === 'failed'),
      'the broken profile was tried first and failed',
    );
    const fellBack = await decisionSaying(stack, 'flaky', /placed sound/);
    assert.match(JSON.stringify(fellBack.inputs.rejected), /broken/);
  });
});
