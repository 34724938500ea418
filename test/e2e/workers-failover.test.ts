// Two `llmgw worker` processes share one task queue; the simulated cluster runs in the one holding the
// lease. The holder is killed (SIGKILL) while a burst of load is being placed: the other takes the lease
// over, starts the engines again, and the reconcilers end at exactly the replicas wanted, none doubled.
// Runs on whichever Temporal the harness gives (LLMGW_TEST_TEMPORAL).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../src/cli/dev/ports.ts';
import { FAST, gpuNode, gpuProfile, ok } from '../support/cluster.ts';
import { emptyDatabase, type LlmgwProcess, runLlmgw } from '../support/split-stack.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

const LOADED = Array.from({ length: 45 }, (_, i) => `burst-${String(i).padStart(2, '0')}`);
const SERVED = Array.from({ length: 5 }, (_, i) => `served-${i}`);
/** 14 in flight at 4 per replica: each loaded model needs 4 replicas. */
const BURST = { in_flight: 14, per_replica: 4, replicas: 4 };
const SERVED_REPLICAS = 2;
/** Every model's replicas fit with room to spare: 30 nodes of 8 GPUs for 190 one-GPU replicas. */
const NODES = Array.from({ length: 30 }, (_, i) => gpuNode(`gpu-${i}`, 8));
const HOLDS = /sim cluster: (worker \S+) holds the lease/;

interface Worker {
  process: LlmgwProcess;
  metrics: string;
}

describe('two workers: the simulated cluster moves with its lease when its holder is killed', () => {
  let stack: Stack;
  let databaseUrl: string;
  const workers: Worker[] = [];

  async function startWorker(): Promise<Worker> {
    const port = await freePort();
    const worker = {
      process: runLlmgw('worker', {
        ...FAST,
        // The load reported once stays the load for the whole test: nothing scales down.
        LLMGW_LOAD_STALE_S: '600',
        LLMGW_SIM_START_DELAY_MS: '600',
        DATABASE_URL: databaseUrl,
        TEMPORAL_ADDRESS: stack.temporalAddress,
        TEMPORAL_NAMESPACE: stack.config.temporalNamespace,
        LLMGW_TASK_QUEUE: stack.config.taskQueue,
        LLMGW_METRICS_PORT: String(port),
      }),
      metrics: `http://127.0.0.1:${port}/metrics`,
    };
    workers.push(worker);
    return worker;
  }

  const leads = async (worker: Worker) => {
    const text = await (await fetch(worker.metrics)).text();
    return Number(/^llmgw_sim_cluster_leader (\S+)$/m.exec(text)?.[1]);
  };

  const allReplicas = () =>
    ok<{ id: string; model: string; state: string }[]>(stack, 'GET', '/api/v1/replicas');

  /** The endpoints of the simulated replicas, each once it has one. */
  const servedEndpoints = async () =>
    (
      await stack.sql<{ endpoint: string | null }[]>`
        select endpoint from replicas where model like 'served-%' and state = 'ready' order by id`
    ).flatMap((row) => (row.endpoint ? [row.endpoint] : []));
  const answers = async (endpoint: string) =>
    (await fetch(`${endpoint}/models`).catch(() => null))?.ok === true;

  before(async () => {
    databaseUrl = await emptyDatabase();
    stack = await startStack({ databaseUrl, env: { ...FAST, LLMGW_LOAD_STALE_S: '600' }, nodes: NODES });
  });
  after(async () => {
    for (const worker of workers) await worker.process.stop();
    await stack.stop();
  });

  it('kill -9 of the lease holder mid-burst: the other takes over and ends at exactly the replicas wanted', async () => {
    const first = await startWorker();
    await eventually(
      'the first worker holds the lease',
      async () => HOLDS.test(first.process.output()),
      60_000,
    );
    const second = await startWorker();
    await eventually(
      'the second worker runs',
      async () => /llmgw worker on task queue/.test(second.process.output()),
      60_000,
    );
    assert.deepEqual([await leads(first), await leads(second)], [1, 0]);

    const profile = gpuProfile('h100', 1, { default_concurrency: BURST.per_replica });
    const models = [
      ...LOADED.map(
        (name) => [name, { min_replicas: 1, max_replicas: BURST.replicas, profiles: [profile] }] as const,
      ),
      ...SERVED.map(
        (name) =>
          [
            name,
            {
              min_replicas: SERVED_REPLICAS,
              max_replicas: SERVED_REPLICAS,
              profiles: [{ ...profile, engine: { kind: 'sim', max_batch: 4 } }],
            },
          ] as const,
      ),
    ];
    const createdAt = Date.now();
    for (let i = 0; i < models.length; i += 10) {
      await Promise.all(
        models.slice(i, i + 10).map(([name, spec]) => ok(stack, 'PUT', `/api/v1/models/${name}`, spec)),
      );
    }
    const atMin = LOADED.length + SERVED.length * SERVED_REPLICAS;
    await eventually(
      'every model at its min_replicas, ready and served',
      async () =>
        (await allReplicas()).filter((r) => r.state === 'ready').length === atMin &&
        (await servedEndpoints()).length === SERVED.length * SERVED_REPLICAS,
      120_000,
    );

    const atMinMs = Date.now() - createdAt;

    // The burst: every loaded model needs 3 more replicas. Kill the holder once a few have been placed.
    await Promise.all(
      LOADED.map((name) => ok(stack, 'POST', `/api/v1/models/${name}/load`, { in_flight: BURST.in_flight })),
    );
    const midBurst = await eventually(
      'the burst under way',
      async () => {
        const replicas = await allReplicas();
        return replicas.length >= atMin + 15 ? replicas : undefined;
      },
      60_000,
    );
    const servedByTheKilled = await servedEndpoints();
    assert.equal(servedByTheKilled.length, SERVED.length * SERVED_REPLICAS);
    const killedAt = Date.now();
    first.process.child.kill('SIGKILL');
    const inFlight = midBurst.filter((r) => r.state !== 'ready').length;
    const survivor = await eventually(
      'the other worker holds the lease',
      async () => HOLDS.exec(second.process.output())?.[1],
      10_000,
    );
    const takeoverMs = Date.now() - killedAt;
    assert.ok(takeoverMs < 5000, `the lease moved ${takeoverMs} ms after the kill`);
    assert.equal(await leads(second), 1);

    const wanted = LOADED.length * BURST.replicas + SERVED.length * SERVED_REPLICAS;
    const settled = await eventually(
      'every model at the replicas it wants, all ready',
      async () => {
        const replicas = await allReplicas();
        return replicas.length >= wanted && replicas.every((r) => r.state === 'ready') ? replicas : undefined;
      },
      150_000,
    );
    const settledMs = Date.now() - killedAt;
    console.log(
      `failover: ${models.length} models at min_replicas in ${atMinMs} ms; killed the holder with ${midBurst.length}/${wanted} replicas placed (${inFlight} not ready yet); ` +
        `${survivor} took the lease over in ${takeoverMs} ms; all ${wanted} ready ${settledMs} ms after the kill`,
    );
    // No duplicate: not one replica beyond those wanted was ever placed (none stopped, none failed).
    const count = (name: string) => settled.filter((r) => r.model === name).length;
    for (const name of LOADED) assert.equal(count(name), BURST.replicas, name);
    for (const name of SERVED) assert.equal(count(name), SERVED_REPLICAS, name);
    assert.equal(settled.length, wanted);
    assert.equal(new Set(settled.map((r) => r.id)).size, wanted);

    // The engines of the killed worker died with it, and only it ran any: the survivor serves them all anew.
    const served = await eventually(
      'every simulated replica served by the survivor',
      async () => {
        const endpoints = await servedEndpoints();
        const answering = await Promise.all(endpoints.map(answers));
        return answering.length === SERVED.length * SERVED_REPLICAS && answering.every(Boolean)
          ? endpoints
          : undefined;
      },
      15_000,
    );
    assert.equal(new Set(served).size, served.length);
    assert.deepEqual(
      served.filter((endpoint) => servedByTheKilled.includes(endpoint)),
      [],
    );
    assert.deepEqual(
      await Promise.all(servedByTheKilled.map(answers)),
      servedByTheKilled.map(() => false),
    );
    assert.equal(await second.process.exitWithin(0), 'running', 'the survivor keeps running');
  });
});
