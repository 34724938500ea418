// What an agent calls for its node (issue 12) against a real Postgres: an agent token registers and
// reports for its own node only; heartbeats, replica reports and engine load; a silent node is lost
// with its replicas (which hold no room and count for nothing in the start backoff) and comes back.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { issueToken } from '../../src/auth/issue.ts';
import { newSecret } from '../../src/contracts/secrets.ts';
import { newId } from '../../src/store/ids.ts';
import { loseSilentNodes } from '../../src/store/node-liveness.ts';
import { recentOutcomes } from '../../src/store/replicas.ts';
import { agentGrant } from '../support/agents.ts';
import { assertError } from '../support/assertions.ts';
import { type Stack, startStack } from '../support/stack.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('agents API', () => {
  let stack: Stack;
  const tag = newId().slice(0, 6);
  const node = `gpu-${tag}`;
  const other = `gpu-other-${tag}`;
  const model = `agent-chat-${tag}`;
  let agent: Record<string, string>;
  const registration = {
    capacity: { gpus: 8, cores: 64, memory_gib: 512 },
    gpu_model: 'H100',
    driver: 'agent',
  };

  const replica = (id: string, state: string, on = node) =>
    stack.sql`insert into replicas (id, model, profile, node, resources, state)
      values (${id}, ${model}, 'gpu', ${on}, ${stack.sql.json({ gpus: 1 })}, ${state})`;
  const row = async (id: string) =>
    (await stack.sql`select state, reason, endpoint from replicas where id = ${id}`)[0];
  const nodeRow = async (name: string) =>
    (await stack.call('GET', '/api/v1/nodes')).body.find((n: any) => n.name === name);
  /** A node's llmgw_node_state series (state -> "driver value") and heartbeat age, scraped from /metrics. */
  const nodeGauges = async (name: string) => {
    const samples = [...(await stack.scrape()).matchAll(/^(llmgw_node_\w+)\{([^}]*)\} (\S+)$/gm)].map(
      ([, metric, labels, value]) => ({
        metric,
        labels: Object.fromEntries([...labels.matchAll(/(\w+)="([^"]*)"/g)].map(([, k, v]) => [k, v])),
        value: Number(value),
      }),
    );
    const mine = samples.filter((s) => s.labels.node === name);
    return {
      state: Object.fromEntries(
        mine
          .filter((s) => s.metric === 'llmgw_node_state')
          .map((s) => [s.labels.state, `${s.labels.driver} ${s.value}`]),
      ),
      age: mine.filter((s) => s.metric === 'llmgw_node_heartbeat_age_seconds').map((s) => s.value),
    };
  };

  before(async () => {
    stack = await startStack();
    agent = bearer(await stack.token(agentGrant(node)));
    const created = await stack.call('PUT', `/api/v1/models/${model}`, {
      min_replicas: 0,
      max_replicas: 4,
      profiles: [{ name: 'gpu', resources: { gpus: 1 } }],
    });
    assert.ok(created.status < 300, JSON.stringify(created.body));
    assert.equal((await stack.call('PUT', `/api/v1/nodes/${other}`, { capacity: { gpus: 8 } })).status, 201);
  });
  after(() => stack.stop());

  it('an agent token needs a node, and only an agent token takes one', async () => {
    assertError(
      await stack.call('POST', '/api/v1/tokens', { name: `a-${tag}`, role: 'agent' }),
      400,
      'an agent token needs a node and takes no scope: it acts for that node only',
    );
    assertError(
      await stack.call('POST', '/api/v1/tokens', { name: `v-${tag}`, role: 'viewer', node }),
      400,
      'only an agent token is bound to a node',
    );
    const listed = (await stack.call('GET', '/api/v1/tokens')).body.find(
      (t: any) => t.name === `agent-${node}`,
    );
    assert.equal(listed.role, 'agent');
    assert.equal(listed.node, node);
  });

  it('registers its own node as an agent node, with a heartbeat', async () => {
    assert.deepEqual(await stack.call('PUT', `/api/v1/nodes/${node}`, registration, agent), {
      status: 201,
      body: { name: node, address: '127.0.0.1' },
    });
    const shown = await nodeRow(node);
    assert.equal(shown.driver, 'agent');
    assert.equal(shown.state, 'ready');
    assert.ok(Date.now() - Date.parse(shown.heartbeat_at) < 60_000);
    assert.equal((await nodeRow(other)).driver, 'sim');
    assert.equal((await nodeRow(other)).heartbeat_at, null);
  });

  it("an admin's PUT that names no driver keeps the node an agent's", async () => {
    const before = await nodeRow(node);
    const { driver: _, ...withoutDriver } = registration;
    assert.equal(
      (await stack.call('PUT', `/api/v1/nodes/${node}`, { ...withoutDriver, labels: { rack: 'r1' } })).status,
      200,
    );
    const after = await nodeRow(node);
    assert.deepEqual(
      [after.driver, after.heartbeat_at, after.labels],
      ['agent', before.heartbeat_at, { rack: 'r1' }],
    );
  });

  it('acts for its own node only, and for nothing else (403 in one sentence; 401 without a token)', async () => {
    assertError(
      await stack.call('PUT', `/api/v1/nodes/${other}`, registration, agent),
      403,
      `an agent of node ${node} may not act for node ${other}: it registers and reports for its own node only`,
    );
    assertError(await stack.call('POST', `/api/v1/nodes/${other}/heartbeat`, undefined, agent), 403);
    assertError(
      await stack.call('GET', '/api/v1/nodes', undefined, agent),
      403,
      `an agent of node ${node} may not read the nodes: an agent only registers and reports for its node (/api/v1/nodes/{name})`,
    );
    assertError(await stack.call('PUT', `/api/v1/models/${model}`, {}, agent), 403);
    assertError(
      await stack.call('POST', `/api/v1/nodes/${node}/heartbeat`, undefined, { authorization: undefined }),
      401,
    );
    assert.equal((await nodeRow(other)).driver, 'sim');
  });

  it("registers within its token's bounds only: beyond them 403 in one sentence, audited, nothing changed", async () => {
    const before = await nodeRow(node);
    const token = `the agent token of node ${node}`;
    const beyond: [Record<string, unknown>, string][] = [
      // The finding: 1,000 H100s from an agent token answered 200.
      [{ capacity: { gpus: 1000 } }, `${token} allows at most 8 GPUs, not 1000 GPUs`],
      [{ capacity: { gpus: 8, cores: 97 } }, `${token} allows at most 96 cores, not 97 cores`],
      [{ gpu_model: 'B200' }, `${token} allows the GPU model H100 only, not B200`],
      [{ labels: { tier: 'gold' } }, `${token} allows no label tier`],
      [{ labels: { name: 'other' } }, `${token} allows the label name=${node} only, not name=other`],
    ];
    for (const [change, sentence] of beyond)
      assertError(
        await stack.call('PUT', `/api/v1/nodes/${node}`, { ...registration, ...change }, agent),
        403,
        sentence,
      );
    assert.deepEqual(await nodeRow(node), before);
    const audited = await stack.sql`
      select actor, after from audit_log where action = 'node.register-refused' and target = ${`node:${node}`}
      order by id`;
    assert.deepEqual(
      audited.map((entry) => [entry.actor, entry.after.reason]),
      beyond.map(([, sentence]) => [`agent-${node}`, sentence]),
    );
    assert.deepEqual(audited[0].after.declared.capacity, { gpus: 1000 });
  });

  it('an agent token needs its address and bounds; one made before them registers nothing', async () => {
    const { node_bounds: _, ...withoutBounds } = agentGrant(node);
    assertError(
      await stack.call('POST', '/api/v1/tokens', { ...withoutBounds, name: `nb-${tag}` }),
      400,
      "an agent token needs node_address and node_bounds: where its node's engines are reached and the most the node may declare",
    );
    assertError(
      await stack.call('POST', '/api/v1/tokens', {
        ...agentGrant(node),
        name: `na-${tag}`,
        node_address: 'http://x/',
      }),
      400,
    );
    const secret = newSecret();
    const legacy = {
      name: `old-${tag}`,
      role: 'agent' as const,
      scope: null,
      models: null,
      node,
      expires_at: null,
    };
    await issueToken(stack.sql, legacy, secret, 'before-017');
    const refusal = `an agent of node ${node} may not act: its token was made before node addresses and bounds; an admin makes a new one with both`;
    assertError(await stack.call('PUT', `/api/v1/nodes/${node}`, registration, bearer(secret)), 403, refusal);
    assertError(
      await stack.call('POST', `/api/v1/nodes/${node}/heartbeat`, undefined, bearer(secret)),
      403,
      refusal,
    );
  });

  it('registers with driver agent only; bad input changes nothing', async () => {
    assertError(
      await stack.call('PUT', `/api/v1/nodes/${node}`, { ...registration, driver: 'sim' }, agent),
      400,
      'an agent registers its node with driver "agent"',
    );
    assertError(
      await stack.call('PUT', `/api/v1/nodes/${node}`, { ...registration, driver: 'k8s' }, agent),
      400,
    );
    assert.equal((await nodeRow(node)).driver, 'agent');
  });

  it('heartbeats: the answer names the replicas the store wants on the node', async () => {
    await replica(`${model}-starting`, 'starting');
    await replica(`${model}-stopped`, 'stopped');
    const answer = await stack.call('POST', `/api/v1/nodes/${node}/heartbeat`, undefined, agent);
    assert.deepEqual(answer, {
      status: 200,
      body: {
        name: node,
        state: 'ready',
        back: false,
        wanted: [{ id: `${model}-starting`, state: 'starting' }],
      },
    });
    assertError(
      await stack.call('POST', `/api/v1/nodes/${other}/heartbeat`),
      404,
      `there is no agent's node "${other}"`,
    );
  });

  it("reports a replica ready with its port (served at the node's address), once; failed with its reason; bad reports change nothing", async () => {
    const id = `${model}-starting`;
    const report = (body: unknown, on = node, who = agent) =>
      stack.call('POST', `/api/v1/nodes/${on}/replicas/${id}/report`, body, who);
    assertError(await report({ state: 'ready', endpoint: 'http://127.0.0.1:8080/api/v1/orgs?x=' }), 400);
    assertError(await report({ state: 'ready', port: 0 }), 400);
    assertError(await report({ state: 'ready' }), 400);
    assertError(await report({ state: 'exploded' }), 400);
    assert.equal((await row(id)).state, 'starting');
    assertError(await report({ state: 'ready', port: 9 }, other, bearer(stack.adminToken)), 404);

    const ready = await report({ state: 'ready', port: 40001 });
    assert.deepEqual(ready, { status: 200, body: { id, state: 'ready', moved: true } });
    assert.deepEqual(await row(id), { state: 'ready', reason: null, endpoint: 'http://127.0.0.1:40001/v1' });
    assert.deepEqual((await report({ state: 'ready', port: 1 })).body, {
      id,
      state: 'ready',
      moved: false,
    });

    // Its engine ends after serving: a crash, not a failed start, and its model's decisions say why.
    const crashed = await report({ state: 'failed', reason: 'exit code 1; last lines: CUDA out of memory' });
    assert.deepEqual(crashed.body, { id, state: 'crashed', moved: true });
    assert.deepEqual(await row(id), {
      state: 'crashed',
      reason: 'exit code 1; last lines: CUDA out of memory',
      endpoint: null,
    });
    const viewer = bearer(await stack.token({ name: `viewer-${tag}`, role: 'viewer' }));
    const shown = await stack.call('GET', `/api/v1/replicas?model=${model}&state=crashed`, undefined, viewer);
    assert.deepEqual(
      shown.body.map((r: { id: string; reason: string }) => [r.id, r.reason]),
      [[id, 'exit code 1; last lines: CUDA out of memory']],
    );
    const decisions = await stack.call('GET', `/api/v1/models/${model}/decisions?limit=1`, undefined, viewer);
    assert.equal(
      decisions.body[0].reason,
      `replica ${id} crashed on node ${node} after serving: exit code 1; last lines: CUDA out of memory`,
    );
    assert.equal(decisions.body[0].action, 'crashed');

    // One that never served: a failed start.
    await replica(`${model}-failing`, 'starting');
    const failed = await stack.call(
      'POST',
      `/api/v1/nodes/${node}/replicas/${model}-failing/report`,
      { state: 'failed', reason: 'failed to load model' },
      agent,
    );
    assert.deepEqual(failed.body, { id: `${model}-failing`, state: 'failed', moved: true });
    const noted = await stack.call('GET', `/api/v1/models/${model}/decisions?limit=1`, undefined, viewer);
    assert.equal(
      noted.body[0].reason,
      `replica ${model}-failing failed to start on node ${node}: failed to load model`,
    );
    assertError(
      await stack.call('POST', `/api/v1/nodes/${node}/replicas/nope/report`, { state: 'stopped' }, agent),
      404,
      `node ${node} holds no replica "nope"`,
    );
  });

  it("a node registered at its token's new address serves there only: its replicas' endpoints move, the list shows it", async () => {
    const moving = `gpu-moving-${tag}`;
    const id = `${model}-moving`;
    // The admin gives the node a second token at another address, as when its machine moves.
    const first = bearer(await stack.token(agentGrant(moving, '127.0.0.1')));
    const second = bearer(
      await stack.token({ ...agentGrant(moving, '127.0.0.2'), name: `agent-${moving}-moved` }),
    );
    const register = (token: Record<string, string>) =>
      stack.call('PUT', `/api/v1/nodes/${moving}`, registration, token);
    assert.equal((await register(first)).status, 201);
    await replica(id, 'starting', moving);
    await stack.call(
      'POST',
      `/api/v1/nodes/${moving}/replicas/${id}/report`,
      { state: 'ready', port: 40002 },
      first,
    );
    assert.equal((await row(id)).endpoint, 'http://127.0.0.1:40002/v1');
    assert.equal((await nodeRow(moving)).address, '127.0.0.1');

    assert.deepEqual(await register(second), { status: 200, body: { name: moving, address: '127.0.0.2' } });
    assert.deepEqual(await row(id), { state: 'ready', reason: null, endpoint: 'http://127.0.0.2:40002/v1' });
    assert.equal((await nodeRow(moving)).address, '127.0.0.2');
    assert.equal((await nodeRow(other)).address, null);
    await stack.sql`delete from replicas where id = ${id}`;
  });

  it("reports an engine's load as the source replica:<id>", async () => {
    const id = `${model}-serving`;
    await replica(id, 'ready');
    const answer = await stack.call(
      'POST',
      `/api/v1/nodes/${node}/replicas/${id}/load`,
      { in_flight: 3, waiting: 2 },
      agent,
    );
    assert.equal(answer.status, 202, JSON.stringify(answer.body));
    assert.equal(answer.body.model, model);
    const [stored] =
      await stack.sql`select in_flight, waiting from load_reports where model = ${model} and source = ${`replica:${id}`}`;
    assert.deepEqual({ ...stored }, { in_flight: 3, waiting: 2 });
    assertError(
      await stack.call('POST', `/api/v1/nodes/${node}/replicas/${id}/load`, { in_flight: -1 }, agent),
      400,
    );
  });

  it("a replica's log: refused in one sentence on a simulated node, for a bad tail, and for a replica unknown", async () => {
    await replica(`${model}-on-sim`, 'ready', other);
    assertError(
      await stack.call('GET', `/api/v1/replicas/${model}-on-sim/logs`),
      409,
      `replica ${model}-on-sim runs on the simulated node ${other}, which keeps no engine log`,
    );
    assertError(await stack.call('GET', `/api/v1/replicas/${model}-on-sim/logs?tail=0`), 400);
    assertError(await stack.call('GET', '/api/v1/replicas/nope/logs'), 404, 'there is no replica "nope"');
    assertError(await stack.call('GET', `/api/v1/replicas/${model}-on-sim/logs`, undefined, agent), 403);
  });

  it('a silent node is lost with its replicas, which free their room and are no failed starts; a heartbeat brings it back', async () => {
    await replica(`${model}-pending`, 'pending');
    assert.deepEqual(await loseSilentNodes(stack.sql, 60_000), { nodes: [], models: [] });
    await stack.sql`update nodes set heartbeat_at = now() - interval '90 seconds' where name = ${node}`;
    assert.deepEqual(await loseSilentNodes(stack.sql, 60_000), { nodes: [node], models: [model] });

    const shown = await nodeRow(node);
    assert.equal(shown.state, 'lost');
    assert.equal(shown.replicas, 0);
    assert.deepEqual(shown.allocated, { gpus: 0, cores: 0, memory_gib: 0 });
    for (const id of [`${model}-serving`, `${model}-pending`]) {
      assert.deepEqual(await row(id), {
        state: 'lost',
        reason: `node ${node}'s agent was silent for over 60 s; replaced elsewhere`,
        endpoint: null,
      });
    }
    const notes =
      await stack.sql`select action, reason from decisions where model = ${model} and action = 'lost'`;
    assert.equal(notes.length, 2, JSON.stringify(notes));
    const outcomes = await recentOutcomes(stack.sql, model, 600_000);
    assert.deepEqual(outcomes.map((o) => o.state).sort(), ['crashed', 'failed', 'ready', 'stopped']);
    // Losing again loses nothing twice.
    assert.deepEqual(await loseSilentNodes(stack.sql, 60_000), { nodes: [], models: [] });
    const lost = await nodeGauges(node);
    assert.deepEqual(lost.state, { ready: 'agent 0', cordoned: 'agent 0', down: 'agent 0', lost: 'agent 1' });
    assert.equal(lost.age.length, 1);
    assert.ok(lost.age[0] >= 90 && lost.age[0] < 150, `heartbeat age ${lost.age[0]}`);
    // A simulated node: its state, and no heartbeat age.
    assert.deepEqual(await nodeGauges(other), {
      state: { ready: 'sim 1', cordoned: 'sim 0', down: 'sim 0', lost: 'sim 0' },
      age: [],
    });

    const back = await stack.call('POST', `/api/v1/nodes/${node}/heartbeat`, undefined, agent);
    assert.deepEqual(back.body, { name: node, state: 'ready', back: true, wanted: [] });
    assert.equal((await nodeRow(node)).state, 'ready');
    // Not wanted, their engines are stopped by the agent back: so are their rows, saying so.
    for (const id of [`${model}-serving`, `${model}-pending`]) {
      assert.deepEqual(await row(id), {
        state: 'stopped',
        reason: `node ${node}'s agent was silent for over 60 s; replaced elsewhere; its agent came back and stopped its engine`,
        endpoint: null,
      });
    }
    const ready = await nodeGauges(node);
    assert.deepEqual(ready.state, {
      ready: 'agent 1',
      cordoned: 'agent 0',
      down: 'agent 0',
      lost: 'agent 0',
    });
    assert.ok(ready.age.length === 1 && ready.age[0] < 60, `heartbeat age ${ready.age}`);
  });

  it('a node cordoned when it was lost comes back cordoned, by a heartbeat or a registration', async () => {
    for (const comeBack of [
      () => stack.call('POST', `/api/v1/nodes/${node}/heartbeat`, undefined, agent),
      () => stack.call('PUT', `/api/v1/nodes/${node}`, registration, agent),
    ]) {
      assert.equal((await stack.call('POST', `/api/v1/nodes/${node}/cordon`)).status, 200);
      await stack.sql`update nodes set heartbeat_at = now() - interval '90 seconds' where name = ${node}`;
      assert.deepEqual((await loseSilentNodes(stack.sql, 60_000)).nodes, [node]);
      assert.ok((await comeBack()).status < 300);
      assert.equal((await nodeRow(node)).state, 'cordoned');
      assert.equal((await stack.call('POST', `/api/v1/nodes/${node}/uncordon`)).status, 200);
    }
  });
});
