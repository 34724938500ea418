// Priority nests (issue 30): the attack replayed through the API with the worker and the
// simulated cluster. An operator of a team with no quota gives its model priority 1,000,000 and a
// min_replicas the node cannot hold beside another org's replicas: it must not preempt them (before,
// it drained them below their floor). An admin's priority on the attacker's org (a quota's) does.
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
import { type Stack, startStack } from '../support/stack.ts';

describe('priority nests: a number a tenant writes on its own model outranks no other tenant', () => {
  let stack: Stack;
  let operator: Record<string, string>;

  before(async () => {
    // One node of 4 GPUs: the victim's two floor replicas and two of the attacker's fill it.
    stack = await startStack({ worker: true, env: FAST, nodes: [gpuNode('gpu-1', 4)] });
    for (const [org, team] of [
      ['Victim', 'serve'],
      ['Attacker', 'eager'],
    ]) {
      await ok(stack, 'POST', '/api/v1/orgs', { name: org });
      await ok(stack, 'POST', '/api/v1/teams', { org, name: team });
    }
    operator = {
      authorization: `Bearer ${await stack.token({ name: 'eager-op', role: 'operator', scope: 'team:Attacker/eager' })}`,
    };
    await ok(stack, 'PUT', '/api/v1/models/steady', {
      owner: 'team:Victim/serve',
      min_replicas: 2,
      max_replicas: 2,
      profiles: [gpuProfile('h100', 1, { default_concurrency: 1 })],
    });
    await settledAt(stack, 'steady', 2, 30_000);
  });
  after(() => stack.stop());

  it("an operator's priority of 1,000,000 on a team without quota preempts nothing of another org", async () => {
    const answer = await stack.call(
      'PUT',
      '/api/v1/models/greedy',
      {
        owner: 'team:Attacker/eager',
        priority: 1_000_000,
        min_replicas: 4,
        max_replicas: 4,
        profiles: [gpuProfile('h100', 1, { default_concurrency: 1 })],
      },
      operator,
    );
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    const victims = (await activeReplicas(stack, 'steady')).map((r) => r.id).sort();
    // greedy takes the free room, then waits: its floor 3 of 4 is weaker than steady's floor 2 of 2.
    await settledAt(stack, 'greedy', 2, 30_000);
    await decisionSaying(stack, 'greedy', /no room|pending|waits/, 30_000);
    // Several resyncs later steady still runs both replicas, and nothing was preempted for greedy.
    await new Promise((resolve) => setTimeout(resolve, 4 * Number(FAST.LLMGW_RESYNC_S) * 1000));
    const steady = await activeReplicas(stack, 'steady');
    assert.deepEqual(
      steady.map((r) => [r.id, r.state]).sort(),
      victims.map((id) => [id, 'ready']),
      'the victim keeps its floor',
    );
    const greedy = await ok<{ action: string; reason: string }[]>(
      stack,
      'GET',
      '/api/v1/models/greedy/decisions?limit=200',
    );
    assert.equal(greedy.filter((d) => d.action === 'preempt').length, 0, JSON.stringify(greedy.slice(0, 3)));
  });

  it('the operator cannot set its own scope a priority: only whoever may change its quota can', async () => {
    const answer = await stack.call(
      'PUT',
      '/api/v1/quotas',
      { scope: 'team:Attacker/eager', priority: 1_000_000 },
      operator,
    );
    assert.equal(answer.status, 403, JSON.stringify(answer.body));
  });

  it("an admin's priority on the attacker's org orders the orgs: then greedy takes steady's room", async () => {
    await ok(stack, 'PUT', '/api/v1/quotas', { scope: 'org:Attacker', priority: 1 });
    await settledAt(stack, 'greedy', 4, 60_000);
    await decisionSaying(stack, 'greedy', /^scale up: .*preempted/, 5_000);
    assert.equal((await activeReplicas(stack, 'steady')).filter((r) => r.state === 'ready').length, 0);
  });
});
