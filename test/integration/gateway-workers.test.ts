// `llmgw gateway` with LLMGW_GATEWAY_WORKERS=2: two processes share the port, both serve requests, and
// each reports its load as a source of its own (gateway:<instance>-w1, -w2), so their counts add up.
// With the default of one, that one is a worker too: with the same V8 flags, and started again if it dies.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { after, before, describe, it } from 'node:test';
import { type SimEngine, startSimEngine } from '../../src/cluster/sim/engine.ts';
import { workerExecArgv } from '../../src/gateway/workers.ts';
import { gpuNode, gpuProfile, ok } from '../support/cluster.ts';
import { type LlmgwGateway, startLlmgwGateway } from '../support/llmgw-gateway.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

/** A process's command line. */
const argv = (pid: string | number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');

/** The gateway processes the first process of `llmgw gateway` runs. */
const workersOf = (primary: number) =>
  readFileSync(`/proc/${primary}/task/${primary}/children`, 'utf8')
    .trim()
    .split(' ')
    .filter((pid) => pid !== '' && argv(pid).some((arg) => arg.endsWith('bin/llmgw.mjs')));

describe('llmgw gateway with two worker processes, and with one', () => {
  let stack: Stack;
  let engine: SimEngine;
  let gateway: LlmgwGateway;
  let solo: LlmgwGateway;

  before(async () => {
    stack = await startStack({ nodes: [gpuNode('gpu-1', 8)] });
    await ok(stack, 'PUT', '/api/v1/models/chat', {
      min_replicas: 0,
      max_replicas: 1,
      profiles: [gpuProfile('h100', 1, { default_concurrency: 64 })],
    });
    engine = await startSimEngine({
      model: 'chat',
      maxBatch: 64,
      baseTpotMs: 50,
      tpotGrowthMs: 0,
      jitter: 0,
      seed: 1,
    });
    await stack.sql`
      insert into replicas (id, model, profile, node, resources, state, created_at, endpoint)
      values ('chat-1', 'chat', 'h100', 'gpu-1', ${stack.sql.json({ gpus: 1, cores: 4, memory_gib: 32 })},
        'ready', now(), ${`${engine.url}/v1`})`;
    gateway = await startLlmgwGateway(stack, { LLMGW_GATEWAY_WORKERS: '2', LLMGW_GATEWAY_INSTANCE: 'gw' });
    solo = await startLlmgwGateway(stack, { LLMGW_GATEWAY_INSTANCE: 'solo' });
  });
  after(async () => {
    await solo?.stop();
    await gateway?.stop();
    await engine?.stop();
    await stack?.stop();
  });

  it('answers on one port from both processes, each its own load source', async () => {
    const key = await stack.token({ name: 'app', role: 'admin' });
    // Many requests at once, each on a connection of its own: the kernel deals them to the workers that
    // listen, and each worker reports the streams it holds. A worker still starting (a busy machine) gets
    // none of a round: the next round, 3 s of streams later, finds it listening.
    const round = () =>
      Promise.all(
        Array.from({ length: 24 }, () =>
          fetch(`${gateway.url}/v1/chat/completions`, {
            method: 'POST',
            headers: {
              authorization: `Bearer ${key}`,
              'content-type': 'application/json',
              connection: 'close',
            },
            body: JSON.stringify({
              model: 'chat',
              stream: true,
              max_tokens: 60,
              messages: [{ role: 'user', content: 'hi' }],
            }),
          }),
        ),
      );
    const reporting = async () =>
      (
        await stack.sql<{ source: string }[]>`
          select source from load_reports where model = 'chat' and in_flight > 0 order by source`
      ).map((r) => r.source);
    let sources: string[] = [];
    for (let rounds = 0; rounds < 10 && sources.length < 2; rounds++) {
      const streams = await round();
      assert.ok(streams.every((answer) => answer.status === 200));
      sources = await eventually(
        'load reports of both workers',
        async () => {
          const now = await reporting();
          return now.length === 2 ? now : undefined;
        },
        3_000,
      ).catch(reporting);
      await Promise.all(streams.map((answer) => answer.text()));
    }
    assert.deepEqual(sources, ['gateway:gw-w1', 'gateway:gw-w2']);
  });
  it('runs its workers with the V8 flags of workers.ts, and the first process without them', () => {
    const primary = gateway.child.pid!;
    const workers = workersOf(primary);
    assert.equal(workers.length, 2, 'two workers');
    // The collector's flag comes only on a machine with no core to spare beyond the two workers.
    const flags = workerExecArgv([], undefined, availableParallelism() > 2);
    for (const worker of workers) {
      for (const flag of flags) assert.ok(argv(worker).includes(flag), `worker ${worker}: ${flag}`);
    }
    for (const flag of flags) assert.ok(!argv(primary).includes(flag), `primary: ${flag}`);
  });

  it('runs one worker by default, with the V8 flags of workers.ts, reporting as the gateway itself', () => {
    const primary = solo.child.pid!;
    const workers = workersOf(primary);
    assert.equal(workers.length, 1, 'one worker');
    for (const flag of workerExecArgv([], undefined, availableParallelism() > 1)) {
      assert.ok(argv(workers[0]).includes(flag), `worker: ${flag}`);
      assert.ok(!argv(primary).includes(flag), `primary: ${flag}`);
    }
    assert.match(solo.output(), /llmgw gateway on \S+ \(load source gateway:solo\)/);
  });

  it('starts its one worker again when it dies, and the new one serves', async () => {
    const primary = solo.child.pid!;
    const [first] = workersOf(primary);
    process.kill(Number(first), 'SIGKILL');
    const key = await stack.token({ name: 'solo-app', role: 'admin' });
    const answer = await eventually(
      'a new worker to answer',
      async () => {
        const [worker] = workersOf(primary);
        if (worker === undefined || worker === first) return undefined;
        const reply = await fetch(`${solo.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'chat', max_tokens: 2, messages: [{ role: 'user', content: 'hi' }] }),
        }).catch(() => undefined);
        return reply?.status === 200 ? reply.json() : undefined;
      },
      20_000,
    );
    assert.equal((answer as { object: string }).object, 'chat.completion');
  });
});
