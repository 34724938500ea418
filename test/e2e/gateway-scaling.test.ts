import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  activeReplicas,
  decisionSaying,
  FAST,
  gpuNode,
  gpuProfile,
  ok,
  settledAt,
} from '../support/cluster.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

/** A chat completion through the gateway with a client key (`maxTokens` unset: the engine's default). */
const chatThrough = (stack: Stack, key: string, model: string, maxTokens?: number, stream = false) =>
  fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      model,
      stream,
      ...(maxTokens !== undefined && { max_tokens: maxTokens }),
      messages: [{ role: 'user', content: 'hi' }],
    }),
  });

/** The gateway's own counts as the only load: nobody reports any by hand in these tests. */
describe('the gateway drives scaling', () => {
  let stack: Stack;
  let key: string;
  before(async () => {
    stack = await startStack({
      worker: true,
      gateway: true,
      env: { ...FAST, LLMGW_GATEWAY_QUEUE_S: '4', LLMGW_GATEWAY_QUEUE_MAX: '3' },
      nodes: [gpuNode('gpu-1', 8), gpuNode('gpu-2', 8)],
    });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Acme' });
    await ok(stack, 'POST', '/api/v1/teams', { org: 'Acme', name: 'ml' });
    key = await stack.token({ name: 'ml-app', role: 'client', scope: 'team:Acme/ml' });
  });
  after(() => stack?.stop());

  const model = (name: string, extra: Record<string, unknown> = {}) =>
    ok(stack, 'PUT', `/api/v1/models/${name}`, {
      owner: 'team:Acme/ml',
      min_replicas: 0,
      max_replicas: 16,
      profiles: [
        gpuProfile('h100', 1, {
          default_concurrency: 16,
          engine: { kind: 'sim', max_batch: 16, base_tpot_ms: 20, tpot_growth_ms: 0 },
        }),
      ],
      ...extra,
    });
  const chat = (name: string, maxTokens: number, stream = false) =>
    chatThrough(stack, key, name, maxTokens, stream);
  const gatewaySources = (name: string) =>
    stack.sql<{ source: string; in_flight: number; waiting: number }[]>`
      select source, in_flight, waiting from load_reports where model = ${name} and source like 'gateway:%'`;

  it('a request to a model with no replica is held until its reconciler has started one, then answered', async () => {
    await model('from-zero');
    assert.deepEqual(await activeReplicas(stack, 'from-zero'), []);
    const answer = await chat('from-zero', 2);
    assert.equal(answer.status, 200, await answer.clone().text());
    assert.equal((await answer.json()).choices[0].message.content, ' tok0 tok1');
    const up = await decisionSaying(stack, 'from-zero', /scale up/);
    assert.equal(up.action, 'place');
    assert.equal((await activeReplicas(stack, 'from-zero')).length, 1);
    // The gateway reported the held request as waiting, then nothing left.
    assert.deepEqual(
      (await gatewaySources('from-zero')).map((r) => [r.in_flight, r.waiting]),
      [[0, 0]],
    );
  });

  it('with no replica possible (a limit of 0 GPUs) the answer is 503 with Retry-After; past the queue, 429', async () => {
    await ok(stack, 'POST', '/api/v1/teams', { org: 'Acme', name: 'none' });
    await ok(stack, 'PUT', '/api/v1/quotas', { scope: 'team:Acme/none', limit: { gpus: 0 } });
    await model('blocked', { owner: 'team:Acme/none' });
    const admin = await stack.token({ name: 'none-app', role: 'client', scope: 'team:Acme/none' });
    const ask = () => chatThrough(stack, admin, 'blocked');
    const held = [ask(), ask(), ask()];
    await new Promise((resolve) => setTimeout(resolve, 300));
    const fourth = await ask();
    assert.equal(fourth.status, 429);
    assert.equal(fourth.headers.get('retry-after'), '5');
    assert.match((await fourth.json()).error.message, /already holds 3 requests waiting/);
    for (const answer of await Promise.all(held)) {
      assert.equal(answer.status, 503);
      assert.equal(answer.headers.get('retry-after'), '5');
      const { error } = await answer.json();
      assert.equal(error.code, 'no_replica_ready');
      assert.match(error.message, /model blocked has no ready replica after 4 s/);
    }
    await decisionSaying(stack, 'blocked', /a limit of team Acme \/ none stops h100/);
  });

  it("200 streams at once scale the model up through the gateway's counts", async () => {
    // An engine nobody scrapes: the replicas report no load of their own, only the gateway does.
    await model('busy', {
      min_replicas: 1,
      profiles: [
        gpuProfile('h100', 1, {
          default_concurrency: 16,
          engine: { kind: 'sim', max_batch: 16, base_tpot_ms: 20, tpot_growth_ms: 0, metrics: false },
        }),
      ],
    });
    await decisionSaying(stack, 'busy', /./);
    const first = await chat('busy', 1);
    assert.equal(first.status, 200);
    // All 200 reach the one ready replica, which runs 16 at a time: 60 tokens at 20 ms are about 1.2 s a
    // batch, so the streams last some 15 s, long enough to see the replicas their count asks for.
    let streamsEnded = false;
    const streams = Promise.all(
      Array.from({ length: 200 }, () => chat('busy', 60, true).then((r) => r.text())),
    ).finally(() => {
      streamsEnded = true;
    });
    const up = await decisionSaying(
      stack,
      'busy',
      /scale up: \d+ in flight > 16 at SLO on 1 replica/,
      15_000,
    );
    assert.equal(up.action, 'place');
    const sources = await stack.sql<
      { source: string }[]
    >`select source from load_reports where model = 'busy'`;
    assert.deepEqual(
      sources.map((r) => r.source.split(':')[0]),
      ['gateway'],
      "the only load of busy is the gateway's",
    );
    // Checked while the streams still run: once they end, the scale-down window takes the extra replicas back.
    const ready = await eventually(
      'busy at more than one ready replica while its streams run',
      async () => {
        const replicas = (await activeReplicas(stack, 'busy')).filter((r) => r.state === 'ready');
        return (replicas.length > 1 || streamsEnded) && replicas;
      },
      30_000,
    );
    assert.ok(ready.length > 1, 'busy was scaled up before its streams ended');
    const bodies = await streams;
    assert.ok(
      bodies.every((body) => body.endsWith('data: [DONE]\n\n')),
      'every stream ended whole',
    );
  });
});

describe("an idle model behind the gateway scales down, though its window outlasts the load's staleness", () => {
  let stack: Stack;
  let key: string;
  before(async () => {
    stack = await startStack({
      worker: true,
      gateway: true,
      // A zero the gateway said once goes stale after 3 s; the window to take a replica back is 6 s.
      env: { ...FAST, LLMGW_LOAD_STALE_S: '3', LLMGW_SCALE_DOWN_WINDOW_S: '6' },
      nodes: [gpuNode('gpu-1', 8)],
    });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Acme' });
    key = await stack.token({ name: 'app', role: 'client', scope: 'org:Acme' });
  });
  after(() => stack?.stop());

  it('takes its replicas back to min_replicas once its requests ended', async () => {
    await ok(stack, 'PUT', '/api/v1/models/quiet', {
      owner: 'org:Acme',
      min_replicas: 1,
      max_replicas: 4,
      profiles: [
        gpuProfile('h100', 1, {
          default_concurrency: 4,
          engine: { kind: 'sim', max_batch: 4, base_tpot_ms: 20, tpot_growth_ms: 0, metrics: false },
        }),
      ],
    });
    await settledAt(stack, 'quiet', 1);
    const streams = Array.from({ length: 12 }, () =>
      chatThrough(stack, key, 'quiet', 50, true).then((r) => r.text()),
    );
    await eventually(
      'quiet above one replica',
      async () => (await activeReplicas(stack, 'quiet')).length > 1,
    );
    await Promise.all(streams);
    // Nobody reports load but the gateway, which said none once its requests ended.
    await decisionSaying(stack, 'quiet', /scale down/, 40_000);
    await settledAt(stack, 'quiet', 1, 60_000);
  });
});
