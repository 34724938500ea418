// A silent agent's node is lost (issue 12): the worker that holds the sim-cluster lease loses it after
// LLMGW_NODE_LOST_S, its replicas are lost, and the model's reconciler replaces them on another node,
// its history saying why. A heartbeat brings the node back.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/store/ids.ts';
import { agentGrant } from '../support/agents.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

describe('a lost node', () => {
  let stack: Stack;
  const tag = newId().slice(0, 6);
  const node = `agent-node-${tag}`;
  const spare = `sim-node-${tag}`;
  const model = `lost-chat-${tag}`;
  let agent: Record<string, string>;

  before(async () => {
    stack = await startStack({
      worker: true,
      env: { LLMGW_NODE_LOST_S: '2', LLMGW_SIM_START_DELAY_MS: '100' },
    });
    agent = { authorization: `Bearer ${await stack.token(agentGrant(node))}` };
  });
  after(() => stack.stop());

  const replicas = async () => (await stack.call('GET', `/api/v1/replicas?model=${model}`)).body as any[];

  it('its replicas are replaced elsewhere, saying so; a heartbeat brings it back', async () => {
    const registered = await stack.call(
      'PUT',
      `/api/v1/nodes/${node}`,
      { capacity: { gpus: 2 }, driver: 'agent' },
      agent,
    );
    assert.equal(registered.status, 201);
    const put = await stack.call('PUT', `/api/v1/models/${model}`, {
      min_replicas: 1,
      max_replicas: 1,
      profiles: [{ name: 'gpu', resources: { gpus: 1 } }],
    });
    assert.ok(put.status < 300, JSON.stringify(put.body));
    const first = await eventually('a replica on the agent node', async () =>
      (await replicas()).find((r) => r.node === node && r.state !== 'pending'),
    );
    assert.equal((await stack.call('PUT', `/api/v1/nodes/${spare}`, { capacity: { gpus: 2 } })).status, 201);

    // The agent stays silent: within the window and a check, the node and its replica are lost.
    const lostAt = Date.now();
    await eventually('the node lost', async () =>
      (await stack.call('GET', '/api/v1/nodes')).body.find((n: any) => n.name === node && n.state === 'lost'),
    );
    assert.ok(Date.now() - lostAt < 5_000, `lost after ${Date.now() - lostAt} ms`);
    const replaced = await eventually('a replica ready on the other node', async () =>
      (await replicas()).find((r) => r.node === spare && r.state === 'ready'),
    );
    assert.notEqual(replaced.id, first.id);
    const [gone] = await stack.sql`select state, reason from replicas where id = ${first.id}`;
    assert.deepEqual(
      { ...gone },
      {
        state: 'lost',
        reason: `node ${node}'s agent was silent for over 2 s; replaced elsewhere`,
      },
    );
    const history = (await stack.call('GET', `/api/v1/models/${model}/decisions`)).body;
    const reasons = JSON.stringify(history);
    assert.match(reasons, new RegExp(`replica ${first.id} lost: node ${node}'s agent was silent`));
    // No failed start: nothing backs the profile off.
    assert.deepEqual(
      (await replicas()).filter((r) => r.state === 'failed'),
      [],
    );

    const back = await stack.call('POST', `/api/v1/nodes/${node}/heartbeat`, undefined, agent);
    assert.deepEqual(back.body, { name: node, state: 'ready', back: true, wanted: [] });
  });
});
