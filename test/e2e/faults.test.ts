import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type EmbeddedStore, startEmbeddedPostgres } from '../../src/cli/dev/embedded-postgres.ts';
import { freePort } from '../../src/cli/dev/ports.ts';
import { LOCKS } from '../../src/store/locks.ts';
import { activeReplicas, FAST, gpuNode, gpuProfile, ok, settledAt } from '../support/cluster.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';
import { stackEnvironment } from '../support/stack-environment.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** `llmgw worker` as a process of its own, so that it can be killed for real. */
function spawnWorker(stack: Stack, databaseUrl: string): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'worker'], {
    cwd: ROOT,
    stdio: 'ignore',
    env: stackEnvironment({
      ...FAST,
      LLMGW_SIM_START_DELAY_MS: '600',
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      LLMGW_TASK_QUEUE: stack.config.taskQueue,
    }),
  });
}

const killed = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });

describe('crashes lose nothing and double nothing', () => {
  let dir: string;
  let port: number;
  let pg: EmbeddedStore;
  let stack: Stack;
  let worker: ChildProcess | null = null;

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), 'llmgw-fault-pg-'));
    port = await freePort();
    pg = await startEmbeddedPostgres({ dir, port, persistent: true });
    stack = await startStack({
      databaseUrl: pg.url,
      env: FAST,
      nodes: [gpuNode('gpu-1', 8), gpuNode('gpu-2', 8)],
    });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Acme' });
    await ok(stack, 'PUT', '/api/v1/quotas', {
      scope: 'org:Acme',
      guarantee: { gpus: 4 },
      limit: { gpus: 6 },
    });
  });
  after(async () => {
    if (worker) await killed(worker);
    await stack.stop();
    await pg.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}.password`, { force: true }); // kept beside the data folder (cli/dev/embedded-postgres.ts)
  });

  it('a worker killed mid-pass and restarted converges with no duplicate replica', async () => {
    await ok(stack, 'PUT', '/api/v1/models/sturdy', {
      owner: 'org:Acme',
      min_replicas: 4,
      max_replicas: 4,
      profiles: [gpuProfile('h100', 1)],
    });
    // Kill the worker while it places and starts the four replicas: as soon as it has placed one. A pass
    // places all four at once, so the work may be done before the third kill: then there is none.
    const atKill: string[][] = [];
    const done = (states: string[]) => states.length === 4 && states.every((s) => s === 'ready');
    for (let kill = 0; kill < 3 && !done(atKill.at(-1) ?? []); kill++) {
      worker = spawnWorker(stack, pg.url);
      const previous = JSON.stringify(atKill.at(-1) ?? []);
      // Kill it once it has moved something on since the last kill, while work remains.
      const states = await eventually(
        'the worker at work',
        async () => {
          const all = (await ok<{ state: string }[]>(stack, 'GET', '/api/v1/replicas?model=sturdy')).map(
            (r) => r.state,
          );
          return JSON.stringify(all) !== previous ? all : undefined;
        },
        // An activity the killed worker held is retried once its start-to-close timeout (30 s) has passed.
        75_000,
      );
      await killed(worker);
      atKill.push(states);
      console.log(`killed the worker with sturdy's replicas ${JSON.stringify(states)}`);
    }
    assert.ok(
      atKill.some((states) => states.length < 4 || states.some((s) => s !== 'ready')),
      `the worker was killed with work in progress: ${JSON.stringify(atKill)}`,
    );
    worker = spawnWorker(stack, pg.url);
    // Up once it runs the simulated cluster (it holds the lease): the next test stops the store under it.
    await eventually(
      'the last worker runs the simulated cluster',
      async () =>
        (
          await stack.sql`select 1 from pg_locks where locktype = 'advisory' and granted and objid = ${LOCKS.simCluster}`
        ).length === 1,
      60_000,
    );
    const replicas = await settledAt(stack, 'sturdy', 4, 60_000);
    assert.equal(new Set(replicas.map((r) => r.id)).size, 4);
    // Nothing left behind: no reservation that never started, no replica stuck starting.
    const all = await ok<{ state: string }[]>(stack, 'GET', '/api/v1/replicas?model=sturdy');
    assert.deepEqual(
      all.filter((r) => r.state !== 'ready').map((r) => r.state),
      [],
    );
  });

  it('the store stopped for a while: no replica lost, no guarantee or limit dropped, passes resume alone', async () => {
    const before = await activeReplicas(stack, 'sturdy');
    await pg.stop();
    const refused = await stack.call('GET', '/api/v1/quotas');
    assert.equal(refused.status, 503);
    assert.match(refused.body.error, /the store \(Postgres\) is unreachable/);
    const ready = await stack.call('GET', '/readyz');
    assert.equal(ready.status, 503);
    assert.match(ready.body.error, /Postgres/);
    await new Promise((resolve) => setTimeout(resolve, 3000)); // passes fail and retry meanwhile

    pg = await startEmbeddedPostgres({ dir, port, persistent: true });
    await eventually(
      'the API answers again',
      async () => (await stack.call('GET', '/readyz')).status === 200,
      30_000,
    );
    const after = await activeReplicas(stack, 'sturdy');
    assert.deepEqual(after.map((r) => r.id).sort(), before.map((r) => r.id).sort());
    const [quota] = await ok(stack, 'GET', '/api/v1/quotas');
    assert.deepEqual([quota.guarantee, quota.limit], [{ gpus: 4 }, { gpus: 6 }]);

    // Passes resume: the limit of 6 GPUs still stops the model at 6 replicas.
    await ok(stack, 'PUT', '/api/v1/models/sturdy', {
      owner: 'org:Acme',
      min_replicas: 8,
      max_replicas: 8,
      profiles: [gpuProfile('h100', 1)],
    });
    await settledAt(stack, 'sturdy', 6, 30_000);
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.equal((await activeReplicas(stack, 'sturdy')).length, 6, 'the limit still holds');
  });

  it('writes while the store is stopped: 503 naming the store, nothing half-written, none done later', async () => {
    const stored = async () => ({
      quotas: await ok(stack, 'GET', '/api/v1/quotas'),
      orgs: await ok(stack, 'GET', '/api/v1/orgs'),
      models: (await ok<{ name: string }[]>(stack, 'GET', '/api/v1/models')).map((m) => m.name),
      audit: (await ok<{ id: number }[]>(stack, 'GET', '/api/v1/audit?limit=1'))[0]?.id,
    });
    const before = await stored();
    await pg.stop();
    const writes: [string, string, unknown][] = [
      ['PUT', '/api/v1/quotas', { scope: 'org:Acme', guarantee: { gpus: 1 }, limit: { gpus: 2 } }],
      ['POST', '/api/v1/orgs', { name: 'Outage' }],
      [
        'PUT',
        '/api/v1/models/outage',
        { owner: 'org:Acme', max_replicas: 1, profiles: [gpuProfile('h100', 1)] },
      ],
      ['DELETE', '/api/v1/quotas/org%3AAcme', undefined],
      ['POST', '/api/v1/tokens', { name: 'outage', role: 'viewer' }],
    ];
    for (const [method, path, body] of writes) {
      const refused = await stack.call(method, path, body);
      assert.equal(refused.status, 503, `${method} ${path}: ${JSON.stringify(refused.body)}`);
      assert.equal(refused.body.error, 'the store (Postgres) is unreachable; try again shortly');
    }

    pg = await startEmbeddedPostgres({ dir, port, persistent: true });
    await eventually(
      'the API answers again',
      async () => (await stack.call('GET', '/readyz')).status === 200,
      30_000,
    );
    assert.deepEqual(await stored(), before, 'no refused write was kept, in part or whole, nor recorded');
    const [{ count }] = await stack.sql`select count(*)::int as count from api_tokens where name = 'outage'`;
    assert.equal(count, 0);
  });
});
