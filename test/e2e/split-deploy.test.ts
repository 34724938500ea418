// Deploying as the README's Deploying section says, outside `llmgw dev`: `llmgw serve` and `llmgw worker`
// as two processes configured only by their environment, on a Postgres llmgw did not start (an empty
// database in the tests' one) and a Temporal dev server started without llmgw's search attributes.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { freePort } from '../../src/cli/dev/ports.ts';
import { findTemporalCli, type TemporalDevServer } from '../../src/cli/dev/temporal-server.ts';
import { newSecret } from '../../src/contracts/secrets.ts';
import { lackedSearchAttributes } from '../../src/reconcilers/search-attribute-check.ts';
import { reconcilerId } from '../../src/workflows/messages.ts';
import { SEARCH_ATTRIBUTE_KEYS } from '../../src/workflows/search-attributes.ts';
import { stopOwnServices } from '../support/services.ts';
import {
  crowdedNamespace,
  emptyDatabase,
  type LlmgwProcess,
  runLlmgw,
  startForeignTemporal,
} from '../support/split-stack.ts';
import { eventually } from '../support/stack.ts';

const CLUSTER = `
nodes:
  - name: rack-gpu
    count: 2
    gpu_model: H100
    capacity: { gpus: 8, cores: 96, memory_gib: 1024 }
`;

/** The line a process printed that starts with `llmgw: ` (how the CLI reports what stopped it). */
const stopLine = (output: string) => output.split('\n').filter((line) => line.startsWith('llmgw: '));

describe('llmgw serve and llmgw worker on an external Postgres and a Temporal that is not ours', () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmgw-split-'));
  const clusterFile = join(dir, 'cluster.yaml');
  writeFileSync(clusterFile, CLUSTER);
  const adminToken = newSecret();
  const started: LlmgwProcess[] = [];
  let temporal: TemporalDevServer;
  let databaseUrl: string;
  let connection: Connection;

  before(async () => {
    [temporal, databaseUrl] = await Promise.all([startForeignTemporal(), emptyDatabase()]);
    connection = await Connection.connect({ address: temporal.address });
  });
  after(async () => {
    await Promise.all(started.map((process) => process.stop()));
    await connection?.close();
    await temporal?.stop();
    await stopOwnServices();
    rmSync(dir, { recursive: true, force: true });
  });

  /** `node bin/llmgw.mjs <command>` with this deployment's environment (and `more`), stopped after the tests. */
  const run = (command: 'serve' | 'worker' | 'gateway', more: Record<string, string>) => {
    const process = runLlmgw(command, {
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: temporal.address,
      LLMGW_RESYNC_S: '1',
      LLMGW_SIM_START_DELAY_MS: '200',
      LLMGW_METRICS_REFRESH_S: '1',
      ...more,
    });
    started.push(process);
    return process;
  };
  const lacked = async () =>
    (await lackedSearchAttributes(connection.operatorService, 'default')).map((key) => key.name);

  it('serve stops with one sentence when LLMGW_ADMIN_TOKEN is unset and the store holds no admin token', async () => {
    const serve = run('serve', {
      PORT: String(await freePort()),
      LLMGW_GATEWAY_PORT: String(await freePort()),
    });
    assert.equal(await serve.exitWithin(60_000), 2, serve.output());
    assert.deepEqual(stopLine(serve.output()), [
      'llmgw: LLMGW_ADMIN_TOKEN is not set and the store holds no admin token, so no one could call the API; set it to a secret (openssl rand -base64 32) and start again',
    ]);
    assert.doesNotMatch(serve.output(), /^\s+at /m, 'no stack trace');
  });

  it('a worker stops with the commands to run when the server refuses to register the search attributes', async () => {
    await crowdedNamespace(temporal.address, 'crowded');
    const worker = run('worker', { TEMPORAL_NAMESPACE: 'crowded', LLMGW_SIM_CLUSTER: clusterFile });
    assert.equal(await worker.exitWithin(60_000), 1, worker.output());
    const [line, ...more] = stopLine(worker.output());
    assert.deepEqual(more, []);
    assert.match(
      line,
      /^llmgw: Temporal namespace crowded lacks llmgw's search attributes LlmgwModel, LlmgwOwner, LlmgwOwnerPath, LlmgwReplicas, LlmgwStatus, and the server refused to register them \(.+\); have its operator run: /,
    );
    for (const key of SEARCH_ATTRIBUTE_KEYS) {
      assert.match(
        line,
        new RegExp(
          `temporal operator search-attribute create --namespace crowded --name ${key.name} --type (Keyword|Int)`,
        ),
      );
    }
    assert.doesNotMatch(worker.output(), /^\s+at /m, 'no stack trace');
  });

  it('runs: the attributes registered, /readyz 503 while they are missing, nodes from LLMGW_SIM_CLUSTER, a model with replicas', async () => {
    assert.equal((await lacked()).length, SEARCH_ATTRIBUTE_KEYS.length, 'Temporal starts without them');
    const port = await freePort();
    const gatewayPort = await freePort();
    const api = `http://127.0.0.1:${port}`;
    const serve = run('serve', {
      PORT: String(port),
      LLMGW_GATEWAY_PORT: String(gatewayPort),
      LLMGW_GATEWAY_INSTANCE: 'split-1',
      LLMGW_ADMIN_TOKEN: adminToken,
    });
    await eventually('serve listening', async () => serve.output().includes(`llmgw API on ${api}`), 60_000);
    await eventually(
      'its gateway listening',
      async () =>
        serve
          .output()
          .includes(`llmgw gateway on http://127.0.0.1:${gatewayPort}/v1 (load source gateway:split-1)`),
      60_000,
    );
    assert.match(
      serve.output(),
      /Temporal namespace default lacked llmgw's search attributes .*: registered them/,
    );
    assert.deepEqual(await lacked(), []);
    const readyz = async () => {
      const response = await fetch(`${api}/readyz`);
      return { status: response.status, body: await response.json() };
    };
    await eventually('/readyz 200 with the attributes', async () => (await readyz()).status === 200);

    // They go missing while serve runs (removed by hand, a namespace made again): /readyz says so.
    await connection.operatorService.removeSearchAttributes({
      namespace: 'default',
      searchAttributes: SEARCH_ATTRIBUTE_KEYS.map((key) => key.name),
    });
    const notReady = await eventually('/readyz 503', async () => {
      const answer = await readyz();
      return answer.status === 503 ? answer : undefined;
    });
    assert.match(
      notReady.body.error,
      /^Temporal's namespace lacks llmgw's search attributes LlmgwModel, .*LlmgwStatus, so no reconciler can run/,
    );

    const worker = run('worker', { LLMGW_SIM_CLUSTER: clusterFile });
    await eventually(
      'the worker started',
      async () => worker.output().includes('llmgw worker on task queue'),
      60_000,
    );
    assert.match(
      worker.output(),
      /Temporal namespace default lacked llmgw's search attributes .*: registered them/,
    );
    assert.ok(worker.output().includes(`simulated cluster: 2 node(s) from ${clusterFile}`), worker.output());
    await eventually('/readyz 200 again', async () => (await readyz()).status === 200);

    const call = async (method: string, path: string, body?: unknown) => {
      const response = await fetch(`${api}${path}`, {
        method,
        headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const answer = await response.json();
      assert.ok(response.ok, `${method} ${path} -> ${response.status} ${JSON.stringify(answer)}`);
      return answer;
    };
    const nodes = await call('GET', '/api/v1/nodes');
    assert.deepEqual(
      nodes.map((node: { name: string }) => node.name),
      ['rack-gpu-1', 'rack-gpu-2'],
    );
    await call('POST', '/api/v1/orgs', { name: 'Acme' });
    await call('POST', '/api/v1/teams', { org: 'Acme', name: 'ml' });
    await call('PUT', '/api/v1/quotas', {
      scope: 'team:Acme/ml',
      guarantee: { gpus: 4 },
      limit: { gpus: 8 },
    });
    await call('PUT', '/api/v1/models/chat', {
      owner: 'team:Acme/ml',
      min_replicas: 2,
      max_replicas: 2,
      profiles: [
        { name: 'h100', priority: 1, resources: { gpus: 2 }, gpu_model: 'H100', default_concurrency: 8 },
      ],
    });
    const replicas = await eventually(
      'two ready replicas of chat',
      async () => {
        const all: { state: string; node: string }[] = await call('GET', '/api/v1/replicas?model=chat');
        const ready = all.filter((replica) => replica.state === 'ready');
        return ready.length === 2 ? ready : undefined;
      },
      60_000,
    );
    assert.ok(replicas.every((replica) => replica.node.startsWith('rack-gpu-')));

    // In the Temporal UI and CLI: filtered by the owner's path, and its current details.
    const client = new Client({ connection });
    const described = await eventually('the reconciler steady, with its owner path', async () => {
      const description = await client.workflow.getHandle(reconcilerId('chat')).describe();
      return description.searchAttributes.LlmgwStatus?.[0] === 'steady' ? description : undefined;
    });
    assert.deepEqual(described.searchAttributes.LlmgwOwnerPath, ['Acme/ml']);
    const { stdout } = await promisify(execFile)(
      await findTemporalCli(),
      ['workflow', 'metadata', '--address', temporal.address, '-w', reconcilerId('chat')],
      { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' } },
    );
    assert.match(stdout, /Current Details:\s+\*\*steady\*\* — /, stdout);

    assert.equal(await worker.stop(), 0, worker.output());
    assert.equal(await serve.stop(), 0, serve.output());
  });

  it('llmgw gateway runs as a process of its own: on LLMGW_GATEWAY_PORT, its own load source, the keys of the store', async () => {
    const gatewayPort = await freePort();
    const url = `http://127.0.0.1:${gatewayPort}/v1`;
    const gateway = run('gateway', {
      LLMGW_GATEWAY_PORT: String(gatewayPort),
      LLMGW_GATEWAY_INSTANCE: 'solo',
    });
    await eventually(
      'the gateway listening',
      async () => gateway.output().includes(`llmgw gateway on ${url} (load source gateway:solo)`),
      60_000,
    );
    const unsigned = await fetch(`${url}/models`);
    assert.equal(unsigned.status, 401);
    assert.deepEqual((await unsigned.json()).error.code, 'invalid_api_key');
    // The admin token that serve stored: the model the last test made, with its replicas.
    const listed = await fetch(`${url}/models`, { headers: { authorization: `Bearer ${adminToken}` } });
    assert.equal(listed.status, 200);
    const { data } = (await listed.json()) as { data: { id: string }[] };
    assert.deepEqual(
      data.map((model) => model.id),
      ['chat'],
    );
    assert.equal(await gateway.stop(), 0, gateway.output());
  });
});
