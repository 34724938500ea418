// Fair shares from the first placement (issue 35), through the API with the worker and the simulated
// cluster: docs/policy.md "Fair shares from the first placement".
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { decisions, FAST, gpuNode, gpuProfile, ok } from '../support/cluster.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

interface ReplicaRow {
  id: string;
  model: string;
  state: string;
}

describe('equal models arriving together under a limit', () => {
  const MODELS = 12;
  const names = Array.from({ length: MODELS }, (_, i) => `together-${i}`);
  let stack: Stack;
  let team: string;

  before(async () => {
    stack = await startStack({ worker: true, env: FAST, nodes: [gpuNode('big', 64)] });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Fair' });
    team = `team:${(await ok<{ id: string }>(stack, 'POST', '/api/v1/teams', { org: 'Fair', name: 'shared' })).id}`;
    // Closed while the models arrive, so that all of them are there when placement starts.
    await ok(stack, 'PUT', '/api/v1/quotas', { scope: 'team:Fair/shared', limit: { gpus: 0 } });
    await Promise.all(
      names.map((name) =>
        ok(stack, 'PUT', `/api/v1/models/${name}`, {
          owner: 'team:Fair/shared',
          min_replicas: 2,
          max_replicas: 2,
          profiles: [gpuProfile('h100', 1, { default_concurrency: 1 })],
        }),
      ),
    );
    for (const name of names) {
      await eventually(`${name} waits on the limit`, async () =>
        (await decisions(stack, name)).some((d) => / stops h100$/.test(d.reason)),
      );
    }
  });
  after(() => stack.stop());

  it('places one replica each from the first placement, and no preemption ping-pong follows', async () => {
    await ok(stack, 'PUT', '/api/v1/quotas', { scope: 'team:Fair/shared', limit: { gpus: MODELS } });
    const oneEach = async () => {
      const rows = await ok<ReplicaRow[]>(stack, 'GET', '/api/v1/replicas');
      const ready = new Set(rows.filter((r) => r.state === 'ready').map((r) => r.model));
      return names.every((name) => ready.has(name)) && !rows.some((r) => r.state !== 'ready') && rows;
    };
    await eventually('one ready replica each', oneEach, 60_000);
    // Resyncs later (1 s each here) nothing has moved: the first look must still see it.
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const rows = await oneEach();
    assert.ok(rows, 'still one ready replica each, nothing draining or on its way');
    assert.equal(rows.length, MODELS, 'every replica ever placed is one of the fair ones: none stopped');

    const all = await Promise.all(names.map((name) => decisions(stack, name)));
    const actions = all.flat().map((d) => d.action);
    assert.equal(actions.filter((a) => a === 'preempt' || a === 'preempted').length, 0, 'nothing preempted');
    assert.equal(actions.filter((a) => a === 'place').length, MODELS, 'one place each, never a second');
    assert.ok(!(await stack.scrape()).includes(`llmgw_preemptions_total{from_scope="${team}"`));
  });
});
