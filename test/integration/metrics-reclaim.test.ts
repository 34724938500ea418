// A scope within its guarantee reclaims a borrowed replica: the worker counts it by both scopes.
import { after, before, describe, it } from 'node:test';
import { FAST, gpuNode, gpuProfile, ok, settledAt } from '../support/cluster.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

describe('metrics of a reclaim', () => {
  let stack: Stack;
  const teams: Record<string, string> = {};
  before(async () => {
    stack = await startStack({ worker: true, env: FAST, nodes: [gpuNode('gpu-1', 2)] });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Acme' });
    for (const name of ['ml', 'web']) {
      teams[name] =
        `team:${(await ok<{ id: string }>(stack, 'POST', '/api/v1/teams', { org: 'Acme', name })).id}`;
    }
    await ok(stack, 'PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', guarantee: { gpus: 1 } });
  });
  after(() => stack.stop());

  const model = async (name: string, owner: string, inFlight: number) => {
    await ok(stack, 'PUT', `/api/v1/models/${name}`, {
      owner,
      min_replicas: 0,
      max_replicas: 4,
      profiles: [gpuProfile('h100', 1, { default_concurrency: 1 })],
    });
    await ok(stack, 'POST', `/api/v1/models/${name}/load`, { in_flight: inFlight });
  };

  it('llmgw_reclaims_total counts the replica by the scope it came from and the one it went to', async () => {
    await model('web-chat', 'team:Acme/web', 2);
    await settledAt(stack, 'web-chat', 2);
    await model('ml-chat', 'team:Acme/ml', 1);
    await settledAt(stack, 'ml-chat', 1);

    await eventually('the reclaim in /metrics', async () => {
      const text = await stack.scrape();
      return text.includes(`llmgw_reclaims_total{from_scope="${teams.web}",for_scope="${teams.ml}"} 1`);
    });
  });
});
