// Real nodes end to end on loopback (issue 12): three `llmgw agent` processes, each its own node with
// its own declared capacity, under a control plane the harness starts. They run the sim engine as a
// process and GuideLLM's mock server as a command engine, each through a runtime an admin defined and
// an operator's models name (issue 30): placement, start, readiness, load from the
// engines' metrics scaling up and down, drain; an engine killed is replaced; an agent killed loses its
// node within the window and its replicas are replaced on the others; the agent restarted leaves no
// engine running twice.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type AgentProcess, agentGrant, engineRecords, killEngines, spawnAgent } from '../support/agents.ts';
import { decisionSaying, FAST, gpuProfile, ok, settledAt } from '../support/cluster.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';
import { testTool } from '../support/test-tools.ts';

const LOST_S = 4;

describe('llmgw agents run real engines', () => {
  let stack: Stack;
  let work: string;
  let guidellm: string;
  const NODES = ['agent-a', 'agent-b', 'agent-c'];

  const agents = new Map<string, AgentProcess & { token: string }>();
  const startAgent = (node: string, token: string) =>
    agents.set(node, { ...spawnAgent(stack, node, token, join(work, node)), token });
  const enginesOf = (node: string) => engineRecords(join(work, node));
  /** The sim engine processes running for a replica (its leading process: `llmgw sim-engine --replica ID`). */
  const simEngines = (replica: string) =>
    execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.includes(' sim-engine ') && line.includes(`--replica ${replica} `)).length;
  const replicas = async (model: string) => await ok<any[]>(stack, 'GET', `/api/v1/replicas?model=${model}`);
  const ready = async (model: string) => (await replicas(model)).filter((r) => r.state === 'ready');

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'llmgw-agents-'));
    guidellm = await testTool('guidellm');
    stack = await startStack({
      worker: true,
      env: {
        ...FAST,
        LLMGW_NODE_LOST_S: String(LOST_S),
        LLMGW_DRAIN_GRACE_S: '1',
        LLMGW_SCALE_DOWN_WINDOW_S: '3',
        // The burst that scales it up keeps spare room while the model remembers it: seconds here.
        LLMGW_BURST_MEMORY_S: '5',
      },
    });
    for (const node of NODES) startAgent(node, await stack.token(agentGrant(node)));
  });
  after(async () => {
    for (const { child } of agents.values()) child.kill('SIGKILL');
    // The engines outlive their agents on purpose: the test ends them.
    for (const node of NODES) killEngines(join(work, node));
    await stack?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('three agents register their nodes, each with its declared capacity', async () => {
    const nodes = await eventually(
      'three agents registered',
      async () => {
        const listed = (await ok<any[]>(stack, 'GET', '/api/v1/nodes')).filter((n) => n.driver === 'agent');
        return listed.length === 3 ? listed : undefined;
      },
      60_000,
    );
    for (const node of nodes) {
      assert.deepEqual(node.capacity, { gpus: 2, cores: 24, memory_gib: 256 });
      assert.equal(node.gpu_model, 'H100');
      assert.equal(node.state, 'ready');
    }
  });

  it('places and starts sim engines and the GuideLLM mock server through runtimes; each ready replica answers at its endpoint', async () => {
    // An admin defines what runs; the team's operator only names it and sets what it lets them.
    await ok(stack, 'PUT', '/api/v1/runtimes/sim-engine', {
      kind: 'sim',
      params: {
        max_batch: { type: 'integer', min: 1, max: 64 },
        base_tpot_ms: { type: 'number', min: 1, max: 1000, default: 20 },
        tpot_growth_ms: { type: 'number', min: 0, max: 100, default: 2 },
      },
    });
    await ok(stack, 'PUT', '/api/v1/runtimes/guidellm-mock', {
      kind: 'command',
      argv: [guidellm, 'mock-server', '--host', '127.0.0.1', '--port', '{port}', '--model', '{model}'],
    });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Acme' });
    await ok(stack, 'POST', '/api/v1/teams', { org: 'Acme', name: 'ml' });
    const operator = {
      authorization: `Bearer ${await stack.token({ name: 'ml-operator', role: 'operator', scope: 'team:Acme/ml' })}`,
    };
    const put = async (model: string, body: Record<string, unknown>) => {
      const answer = await stack.call(
        'PUT',
        `/api/v1/models/${model}`,
        { owner: 'team:Acme/ml', ...body },
        operator,
      );
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
    };
    await put('sim-chat', {
      min_replicas: 2,
      max_replicas: 3,
      profiles: [
        gpuProfile('h100', 1, {
          default_concurrency: 4,
          runtime: 'sim-engine',
          params: { max_batch: 4, base_tpot_ms: 20, tpot_growth_ms: 0 },
        }),
      ],
    });
    await put('mock-chat', {
      min_replicas: 1,
      max_replicas: 1,
      profiles: [gpuProfile('h100', 1, { runtime: 'guidellm-mock' })],
    });
    const sims = await settledAt(stack, 'sim-chat', 2, 90_000);
    const mocks = await settledAt(stack, 'mock-chat', 1, 90_000);
    for (const replica of [...sims, ...mocks]) {
      assert.ok(NODES.includes(replica.node), `${replica.id} on ${replica.node}`);
      const [{ endpoint }] = await stack.sql`select endpoint from replicas where id = ${replica.id}`;
      const models = await (await fetch(`${endpoint}/models`)).json();
      assert.ok(
        JSON.stringify(models).includes(sims.includes(replica) ? 'sim-chat' : 'mock-chat'),
        JSON.stringify(models),
      );
    }
  });

  it("shows a replica's engine log, read on its node by its agent", async () => {
    const [replica] = await ready('sim-chat');
    const answer = await ok(stack, 'GET', `/api/v1/replicas/${replica.id}/logs?tail=5`);
    assert.equal(answer.node, replica.node);
    assert.ok(answer.lines.length > 0 && answer.lines.length <= 5, JSON.stringify(answer));
  });

  it("scales up on its engines' own load, and back down through a drain that ends the engine", async () => {
    const [first] = await ready('sim-chat');
    const [{ endpoint }] = await stack.sql`select endpoint from replicas where id = ${first.id}`;
    // Ten streams of 150 tokens at 20 ms on a replica that serves 4 at its SLO: about 3 s in flight.
    const streams = Array.from({ length: 10 }, () =>
      fetch(`${endpoint}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'sim-chat',
          stream: true,
          max_tokens: 150,
          messages: [{ role: 'user', content: 'hi' }],
        }),
      }).then((response) => response.text()),
    );
    const up = await decisionSaying(stack, 'sim-chat', /scale up/, 20_000);
    assert.equal(up.action, 'place');
    await Promise.all(streams);
    const [report] =
      await stack.sql`select source from load_reports where model = 'sim-chat' and source like 'replica:%' limit 1`;
    assert.match(report.source, /^replica:r-[0-9a-f]{16}$/);
    const down = await decisionSaying(stack, 'sim-chat', /scale down/, 60_000);
    assert.equal(down.action, 'remove');
    const drained = (
      await stack.sql`select replica from decisions where model = 'sim-chat' and action = 'remove' order by id desc limit 1`
    )[0].replica;
    await eventually(
      'the drained replica stopped',
      async () => (await replicas('sim-chat')).find((r) => r.id === drained && r.state === 'stopped'),
      30_000,
    );
    assert.equal(simEngines(drained), 0, 'its engine ended');
  });

  it('an engine killed with SIGKILL: its replica crashed, saying so, and is replaced once its backoff ends', async () => {
    const [victim] = await settledAt(stack, 'sim-chat', 2, 60_000);
    const record = enginesOf(victim.node).find((r) => r.replica === victim.id)!;
    const killed = Date.now();
    process.kill(record.pid, 'SIGKILL');
    const crashed = await eventually(
      'the replica crashed',
      async () => (await replicas('sim-chat')).find((r) => r.id === victim.id && r.state === 'crashed'),
      20_000,
    );
    assert.match(crashed.reason, /SIGKILL|signal/, 'its reason, in the API');
    const replaced = await eventually(
      'a replacement ready',
      async () => ((await ready('sim-chat')).length === 2 ? true : undefined),
      20_000,
    );
    const seconds = (Date.now() - killed) / 1000;
    console.info(`a killed engine's replica was replaced in ${seconds.toFixed(1)} s`);
    // The 5 s backoff after a crash, then the engine's start. (FAST resyncs every second here; that the
    // reconciler wakes at the backoff's end without one is test/e2e/llama-cpp.test.ts's, at the usual 30 s.)
    assert.ok(replaced && seconds < 10, `replaced after ${seconds.toFixed(1)} s`);
  });

  it('SIGTERM to an agent drains nothing: its engines keep serving, and the restarted agent adopts them', async () => {
    const [serving] = await settledAt(stack, 'sim-chat', 2, 60_000);
    const node = serving.node;
    const before = enginesOf(node);
    const agent = agents.get(node)!;
    const exited = new Promise((resolve) => agent.child.once('exit', resolve));
    agent.child.kill('SIGTERM');
    await exited;
    const [{ endpoint }] = await stack.sql`select endpoint from replicas where id = ${serving.id}`;
    assert.equal((await fetch(`${endpoint}/models`)).status, 200, 'the engine serves without its agent');
    startAgent(node, agent.token);
    await eventually(
      'the agent back and adopting',
      async () => agents.get(node)!.output.join('').includes('adopted'),
      30_000,
    );
    assert.deepEqual(
      enginesOf(node)
        .map((r) => r.pid)
        .sort(),
      before.map((r) => r.pid).sort(),
      'the same engines, none started again',
    );
    assert.equal(simEngines(serving.id), 1);
    assert.equal(
      (await settledAt(stack, 'sim-chat', 2, 30_000)).some((r) => r.id === serving.id),
      true,
    );
  });

  it('an agent killed with SIGKILL: its node lost within the window, its replicas replaced on the other nodes; restarted, no engine runs twice', async () => {
    const held = [...(await ready('sim-chat')), ...(await ready('mock-chat'))];
    const node = held[0].node;
    const lostReplicas = held.filter((r) => r.node === node).map((r) => r.id);
    const agent = agents.get(node)!;
    agent.child.kill('SIGKILL');
    const killedAt = Date.now();
    await eventually(
      'the node lost',
      async () =>
        (await ok<any[]>(stack, 'GET', '/api/v1/nodes')).find((n) => n.name === node && n.state === 'lost'),
      30_000,
    );
    const tookMs = Date.now() - killedAt;
    assert.ok(tookMs < (LOST_S + 3) * 1000, `lost after ${tookMs} ms`);
    for (const id of lostReplicas) {
      const [row] = await stack.sql`select state from replicas where id = ${id}`;
      assert.equal(row.state, 'lost');
    }
    const sims = await settledAt(stack, 'sim-chat', 2, 90_000);
    const mocks = await settledAt(stack, 'mock-chat', 1, 90_000);
    assert.ok(
      [...sims, ...mocks].every((r) => r.node !== node),
      'replaced on the other nodes',
    );
    const history = JSON.stringify(
      await ok(stack, 'GET', `/api/v1/models/${held[0].model}/decisions?limit=200`),
    );
    assert.match(history, new RegExp(`replica ${held[0].id} lost: node ${node}'s agent was silent`));

    // The lost replicas' engines outlived their agent; restarted, it stops them: none runs twice.
    startAgent(node, agent.token);
    await eventually(
      'the node back',
      async () =>
        (await ok<any[]>(stack, 'GET', '/api/v1/nodes')).find((n) => n.name === node && n.state === 'ready'),
      30_000,
    );
    await eventually("the lost replicas' engines stopped", async () => enginesOf(node).length === 0, 30_000);
    for (const id of lostReplicas.filter((r) => r.startsWith('sim-chat')))
      assert.equal(simEngines(id), 0, id);
    for (const replica of sims) assert.equal(simEngines(replica.id), 1, replica.id);
  });
});
