// The agents' trust boundary (issue 30), each finding replayed through the real API, gateway, worker
// and `llmgw agent` process running the sim engine, on Temporal server with llmgw's authorizer
// (temporal-server.sh start --authorize): an agent reports a port, never a URL, and its engines serve
// at its node's address (127.0.0.2 here, another loopback address than the control plane's); its
// token bounds what it declares; its Temporal credential reaches its own node's task queue only.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Client, Connection } from '@temporalio/client';
import { nodeCredential } from '../../src/contracts/temporal-credentials.ts';
import { reconcilerId } from '../../src/workflows/messages.ts';
import { type AgentProcess, agentGrant, engineRecords, killEngines, spawnAgent } from '../support/agents.ts';
import { FAST, gpuProfile, ok, settledAt } from '../support/cluster.ts';
import { startAuthorizingServices } from '../support/services.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

const NODE = 'trusted-a';
const ADDRESS = '127.0.0.2';

/** Whether anything accepts a connection at host:port. */
const listening = (host: string, port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host, port }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });

describe("an agent's trust boundary", () => {
  let services: Awaited<ReturnType<typeof startAuthorizingServices>>;
  let stack: Stack;
  let work: string;
  let agent: AgentProcess;
  let agentToken: string;
  let clientKey: string;
  /** A service on the control plane's machine that no client's prompt may reach: it counts what does. */
  let victim: Server;
  const victimHits: string[] = [];

  const asAgent = (method: string, path: string, body?: unknown) =>
    stack.call(method, path, body, { authorization: `Bearer ${agentToken}` });
  const chat = (model: string) =>
    fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${clientKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model, max_tokens: 2, messages: [{ role: 'user', content: 'secret prompt' }] }),
      signal: AbortSignal.timeout(30_000),
    });
  const model = (name: string, engine: Record<string, unknown>, replicas = 1) =>
    ok(stack, 'PUT', `/api/v1/models/${name}`, {
      owner: 'team:Acme/ml',
      min_replicas: replicas,
      max_replicas: Math.max(1, replicas),
      profiles: [gpuProfile('h100', 1, { default_concurrency: 4, engine })],
    });

  before(async () => {
    work = mkdtempSync(join(tmpdir(), 'llmgw-agent-trust-'));
    victim = createServer((req, res) => {
      victimHits.push(`${req.method} ${req.url}`);
      res.end('{}');
    });
    await new Promise<void>((resolve) => victim.listen(0, '127.0.0.1', resolve));
    services = await startAuthorizingServices();
    stack = await startStack({
      services,
      worker: true,
      gateway: true,
      env: { ...FAST, LLMGW_TEMPORAL_KEY_FILE: services.keyFile, LLMGW_NODE_LOST_S: '10' },
    });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Acme' });
    await ok(stack, 'POST', '/api/v1/teams', { org: 'Acme', name: 'ml' });
    clientKey = await stack.token({ name: 'ml-app', role: 'client', scope: 'team:Acme/ml' });
    agentToken = await stack.token(agentGrant(NODE, ADDRESS));
    agent = spawnAgent(stack, NODE, agentToken, join(work, NODE));
  });
  after(async () => {
    agent?.child.kill('SIGKILL');
    killEngines(join(work, NODE));
    await stack?.stop();
    await services?.stop();
    victim?.close();
    rmSync(work, { recursive: true, force: true });
  });

  it("runs a replica through the real agent on its node's address, reached there by the gateway, and stops it", async () => {
    await model('chat', { kind: 'sim', max_batch: 4, base_tpot_ms: 5, tpot_growth_ms: 0 });
    const [replica] = await settledAt(stack, 'chat', 1, 120_000);
    assert.equal(replica.node, NODE, agent.output.join(''));
    const [{ endpoint }] = await stack.sql`select endpoint from replicas where id = ${replica.id}`;
    const [{ port }] = engineRecords(join(work, NODE));
    assert.equal(endpoint, `http://${ADDRESS}:${port}/v1`);
    assert.equal(await listening(ADDRESS, port), true, 'the engine listens on the node address');
    assert.equal(await listening('127.0.0.1', port), false, 'and not on 127.0.0.1');
    const answer = await chat('chat');
    assert.equal(answer.status, 200, await answer.clone().text());

    await model('chat', { kind: 'sim', max_batch: 4, base_tpot_ms: 5, tpot_growth_ms: 0 }, 0);
    await eventually(
      'the replica stopped and its engine ended',
      async () => {
        const [row] = await stack.sql`select state from replicas where id = ${replica.id}`;
        return row.state === 'stopped' && engineRecords(join(work, NODE)).length === 0;
      },
      60_000,
    );
  });

  it("finding: an agent's report cannot send clients' prompts elsewhere than its node's address", async () => {
    // An engine that never answers ready: its replica stays starting, for the agent to report on.
    await model('stuck', { kind: 'command', argv: [process.execPath, '-e', 'setInterval(() => {}, 1000)'] });
    const [replica] = await eventually(
      'a starting replica of stuck',
      async () => {
        const rows = await stack.sql`select id from replicas where model = 'stuck' and state = 'starting'`;
        return rows.length ? rows : undefined;
      },
      60_000,
    );
    const { port: victimPort } = victim.address() as { port: number };
    const report = (body: unknown) =>
      asAgent('POST', `/api/v1/nodes/${NODE}/replicas/${replica.id}/report`, body);
    const hostile = await report({
      state: 'ready',
      endpoint: `http://127.0.0.1:${victimPort}/api/v1/orgs?x=`,
    });
    assert.equal(hostile.status, 400, JSON.stringify(hostile.body));
    // A port is all an agent gives: the victim's port names its node's address, where nothing listens.
    assert.equal((await report({ state: 'ready', port: victimPort })).status, 200);
    const [{ endpoint }] = await stack.sql`select endpoint from replicas where id = ${replica.id}`;
    assert.equal(endpoint, `http://${ADDRESS}:${victimPort}/v1`);
    const answer = await chat('stuck');
    assert.ok(answer.status >= 500, `${answer.status} ${await answer.text()}`);
    assert.deepEqual(victimHits, [], 'no prompt reached the victim');
    await ok(stack, 'DELETE', '/api/v1/models/stuck');
  });

  it("finding: an agent's token bounds what its node declares; beyond it, refused and audited", async () => {
    const declared = { capacity: { gpus: 1000 }, gpu_model: 'H100', driver: 'agent' };
    const refused = await asAgent('PUT', `/api/v1/nodes/${NODE}`, declared);
    assert.deepEqual(refused, {
      status: 403,
      body: { error: `the agent token of node ${NODE} allows at most 8 GPUs, not 1000 GPUs` },
    });
    // The real agent declaring as much stops at its registration, saying why.
    const greedy = spawnAgent(
      stack,
      NODE,
      agentToken,
      join(work, 'greedy'),
      'gpus=1000,cores=24,memory_gib=256',
    );
    const code = await new Promise((resolve) => greedy.child.once('exit', resolve));
    assert.notEqual(code, 0);
    assert.match(greedy.output.join(''), /allows at most 8 GPUs, not 1000 GPUs/);
    const nodes = await ok<any[]>(stack, 'GET', '/api/v1/nodes');
    assert.equal(nodes.find((n) => n.name === NODE).capacity.gpus, 2);
    const audited = await stack.sql`
      select actor from audit_log where action = 'node.register-refused' and target = ${`node:${NODE}`}`;
    assert.equal(audited.length, 2);
  });

  it("finding: an agent's Temporal credential reaches its own node's task queue and nothing else", async () => {
    const beat = await asAgent('POST', `/api/v1/nodes/${NODE}/heartbeat`);
    const { credential } = beat.body.temporal;
    const namespace = stack.config.temporalNamespace;
    /** What Temporal says to each call: "denied" for PERMISSION_DENIED (the cause of the client's ServiceError). */
    const outcome = async (what: string, call: () => Promise<unknown>) => {
      const error = await call().then(
        () => null,
        (e: Error) => e,
      );
      const said = error ? `${error} ${error.cause ?? ''}` : 'allowed';
      return `${what}: ${said.includes('PERMISSION_DENIED') ? 'denied' : said}`;
    };
    const refusals = async (apiKey: string | undefined) => {
      const connection = await Connection.connect({
        address: stack.temporalAddress,
        ...(apiKey && { apiKey, tls: false }),
      });
      const client = new Client({ connection, namespace });
      try {
        return [
          await outcome('list', async () => {
            for await (const _ of client.workflow.list({ query: 'WorkflowId STARTS_WITH "reconcile:"' }))
              break;
          }),
          await outcome('signal', () =>
            client.workflow.getHandle(reconcilerId('chat')).signal('replicaChanged'),
          ),
          await outcome('poll another node', () =>
            connection.workflowService.pollActivityTaskQueue({
              namespace,
              taskQueue: { name: 'llmgw-node:another' },
              identity: 'hostile',
            }),
          ),
        ];
      } finally {
        await connection.close();
      }
    };
    const denied = ['list: denied', 'signal: denied', 'poll another node: denied'];
    assert.deepEqual(await refusals(credential), denied);
    assert.deepEqual(await refusals(undefined), denied, 'nor without a credential');
    const forged = nodeCredential(
      Buffer.from('not the key, but long enough for one'),
      NODE,
      namespace,
      Date.now(),
    );
    // One signed with another key is refused from the first call on: connecting.
    assert.equal(
      await outcome('connect', () =>
        Connection.connect({ address: stack.temporalAddress, apiKey: forged.credential, tls: false }),
      ),
      'connect: denied',
    );

    // Its own work still runs: a replica started and stopped through the agent since it last connected.
    await model('chat', { kind: 'sim', max_batch: 4, base_tpot_ms: 5, tpot_growth_ms: 0 }, 1);
    await settledAt(stack, 'chat', 1, 120_000);
  });
});
