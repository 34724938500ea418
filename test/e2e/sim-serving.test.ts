import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decisionSaying, FAST, gpuNode, gpuProfile, ok, settledAt } from '../support/cluster.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

describe('simulated replicas serve an engine and report their own load', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack({ worker: true, env: FAST, nodes: [gpuNode('gpu-1', 8)] });
  });
  after(() => stack.stop());

  it('requests sent to a replica scale its model up, with no gateway reporting anything', async () => {
    await ok(stack, 'PUT', '/api/v1/models/served', {
      min_replicas: 1,
      max_replicas: 3,
      profiles: [
        gpuProfile('h100', 1, {
          default_concurrency: 4,
          engine: { kind: 'sim', max_batch: 4, base_tpot_ms: 20, tpot_growth_ms: 0 },
        }),
      ],
    });
    await settledAt(stack, 'served', 1);
    const endpoint = await eventually('the replica serves', async () => {
      const [row] = await stack.sql<{ endpoint: string | null }[]>`
        select endpoint from replicas where model = 'served' and state = 'ready'`;
      return row?.endpoint ?? undefined;
    });
    const models = await (await fetch(`${endpoint}/models`)).json();
    assert.equal(models.data[0].id, 'served');

    // Six streams of 150 tokens at 20 ms: about 3 s in flight on a replica that serves 4 at its SLO.
    const streams = Array.from({ length: 6 }, () =>
      fetch(`${endpoint}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'served',
          stream: true,
          max_tokens: 150,
          messages: [{ role: 'user', content: 'hello' }],
        }),
      }).then((response) => response.text()),
    );
    const up = await decisionSaying(stack, 'served', /scale up: 6 in flight > 4 at SLO on 1 replica/, 15_000);
    assert.equal(up.action, 'place');
    const bodies = await Promise.all(streams);
    assert.ok(
      bodies.every((body) => body.includes('[DONE]')),
      'every stream was served to its end',
    );
    const [report] = await stack.sql<{ source: string }[]>`
      select source from load_reports where model = 'served' order by source limit 1`;
    assert.match(report.source, /^replica:r-[0-9a-f]{16}$/);
  });
});
