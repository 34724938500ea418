// The agent's engine runner (src/agent/supervisor.ts) with real processes, no mocks: the simulated
// engine as a process (`llmgw sim-engine`) and GuideLLM's mock server (a third-party OpenAI server,
// as a command engine; the harness installs it: scripts/test-tools.sh) are started, become ready,
// answer a chat completion and are scraped; a kill -9 is reported with the log's last lines, a stop
// leaves no process of the engine's group; a stand-in nvidia-smi with 8 GPUs gives two 4-GPU replicas
// disjoint CUDA_VISIBLE_DEVICES, as the engines themselves saw them; a restarted agent adopts what runs.
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadGaugesOf, scrapeLoad } from '../../../src/agent/engine-metrics.ts';
import { detectCapacity, GpuAllocator } from '../../../src/agent/gpus.ts';
import { type EngineExit, type ReplicaStart, Supervisor } from '../../../src/agent/supervisor.ts';
import type { EngineSpec } from '../../../src/contracts/schemas/engine.ts';
import { testTool } from '../../support/test-tools.ts';

/** The processes of a process group, as ps sees them. */
const groupSize = (pgid: number) =>
  execFileSync('ps', ['-eo', 'pgid='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => Number(line.trim()) === pgid).length;

const chat = async (url: string, model: string) => {
  const answer = await fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hello' }], max_tokens: 4 }),
  });
  assert.equal(answer.status, 200);
  return (await answer.json()) as { choices: { message: { content: string } }[] };
};

const until = async (what: string, check: () => boolean | Promise<boolean>, withinMs = 15_000) => {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
};

/** An engine that forks a worker (as vLLM and SGLang do) and ignores SIGTERM. */
const stubbornForking: EngineSpec = {
  kind: 'command',
  argv: [
    process.execPath,
    '-e',
    `process.on('SIGTERM', () => console.log('SIGTERM: not stopping'));
     require('child_process').spawn('sleep', ['600'], { stdio: 'inherit' });
     require('http').createServer((q, s) => s.end('{}')).listen(Number(process.argv[1]), '127.0.0.1');`,
    '{port}',
  ],
};

/** What engines.json says of an engine on a port nothing answers on. */
const silentRecord = (replica: string, pid: number) => ({
  replica,
  model: 'chat',
  engine: { kind: 'sim' as const },
  pid,
  port: 9,
  url: 'http://127.0.0.1:9',
  gpus: [],
  log: '',
  started_at: new Date().toISOString(),
});

/** A command engine in node: writes the environment it was given to `out`, then answers 200 to anything. */
const envWriter = (out: string): EngineSpec => ({
  kind: 'command',
  argv: [
    process.execPath,
    '-e',
    `require('fs').writeFileSync(process.argv[2], JSON.stringify(process.env));
     require('http').createServer((q, s) => s.end('{}')).listen(Number(process.argv[1]), '127.0.0.1');`,
    '{port}',
    out,
  ],
  start_timeout_s: 30,
});

describe('the engine supervisor, with real engines', () => {
  const work = mkdtempSync(join(tmpdir(), 'llmgw-agent-'));
  const home = join(work, 'agent-home');
  const exits: EngineExit[] = [];
  let supervisor: Supervisor;
  let guidellm: string;
  const sim: ReplicaStart = {
    replica: 'chat-sim-1',
    model: 'chat',
    engine: { kind: 'sim', max_batch: 4, base_tpot_ms: 5, tpot_growth_ms: 0 },
    gpus: [],
  };

  before(async () => {
    guidellm = await testTool('guidellm');
    supervisor = new Supervisor({ home, onExit: (exit) => exits.push(exit) });
  });
  after(async () => {
    for (const { replica } of supervisor.list()) await supervisor.stop(replica);
    supervisor.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('starts the sim engine as a process: ready, answering chats, its load scraped from /metrics', async () => {
    const engine = await supervisor.start(sim);
    assert.match(engine.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    // node, and the esbuild service tsx starts for it while it loads: one group.
    assert.ok(groupSize(engine.pid) >= 1);
    assert.equal((await chat(engine.url, 'chat')).choices.length, 1);
    const gauges = loadGaugesOf(sim.engine)!;
    assert.deepEqual(await scrapeLoad(engine.url, gauges), { running: 0, waiting: 0 });
    // A long answer in flight is one request running, as the engine's own gauges count it.
    const streaming = new AbortController();
    const inFlight = fetch(`${engine.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'chat',
        messages: [{ role: 'user', content: 'go' }],
        max_tokens: 2000,
        stream: true,
      }),
      signal: streaming.signal,
    }).catch(() => null);
    await until('the request to run', async () => (await scrapeLoad(engine.url, gauges)).running === 1);
    streaming.abort();
    await inFlight;
    assert.deepEqual(supervisor.list(), [engine]);
    assert.match(
      (await supervisor.tail(sim.replica, 5)).join('\n'),
      /simulated engine for chat \(replica chat-sim-1\)/,
    );
  });

  it('gives a retried start the engine already running, not a second one', async () => {
    const [first] = supervisor.list();
    const again = await supervisor.start(sim);
    assert.equal(again.pid, first.pid);
    assert.equal(supervisor.list().length, 1);
  });

  it('gives two starts of one replica at once one engine', async () => {
    const replica = { ...sim, replica: 'chat-twice-1' };
    const [a, b] = await Promise.all([supervisor.start(replica), supervisor.start(replica)]);
    assert.equal(a.pid, b.pid);
    assert.equal(supervisor.list().filter((r) => r.replica === replica.replica).length, 1);
    await supervisor.stop(replica.replica);
    assert.equal(groupSize(a.pid), 0);
  });

  it('fails a start that a stop cuts short, saying so', async () => {
    const starting = supervisor.start({
      ...sim,
      replica: 'chat-cut-1',
      engine: { kind: 'command', argv: ['sleep', '600'], start_timeout_s: 60 },
    });
    await until('the engine to be running', () => supervisor.list().some((r) => r.replica === 'chat-cut-1'));
    await supervisor.stop('chat-cut-1');
    await assert.rejects(starting, { message: 'replica chat-cut-1 was stopped while it started' });
    assert.equal(exits.length, 0);
  });

  it("starts GuideLLM's mock server as a command engine: ready, answering chats under the model's name", async () => {
    const engine = await supervisor.start({
      replica: 'chat-guidellm-1',
      model: 'chat',
      engine: {
        kind: 'command',
        argv: [guidellm, 'mock-server', '--host', '127.0.0.1', '--port', '{port}', '--model', '{model}'],
        start_timeout_s: 120,
      },
      gpus: [],
    });
    const models = (await (await fetch(`${engine.url}/v1/models`)).json()) as { data: { id: string }[] };
    assert.deepEqual(
      models.data.map((m) => m.id),
      ['chat'],
    );
    assert.ok((await chat(engine.url, 'chat')).choices[0].message.content.length > 0);
  });

  it('reports a kill -9 of an engine as its exit, with the last lines of its log', async () => {
    const engine = supervisor.list().find((r) => r.replica === sim.replica)!;
    process.kill(engine.pid, 'SIGKILL');
    await until('the exit to be reported', () => exits.length === 1);
    const [exit] = exits;
    assert.equal(exit.replica, sim.replica);
    assert.equal(exit.signal, 'SIGKILL');
    assert.equal(exit.code, null);
    assert.match(
      exit.reason,
      /^the engine was killed by SIGKILL; its log ends:\n--- llmgw agent starts chat-sim-1 /,
    );
    assert.match(exit.lastLines.join('\n'), /simulated engine for chat/);
    assert.deepEqual(
      supervisor.list().map((r) => r.replica),
      ['chat-guidellm-1'],
    );
    // What the engine forked is killed with it: a dead engine's workers would hold its GPUs.
    await until('the rest of its group to be killed', () => groupSize(engine.pid) === 0, 5000);
  });

  it('stops an engine with SIGTERM to its group: no process of it is left, and no failure is reported', async () => {
    const engine = supervisor.list().find((r) => r.replica === 'chat-guidellm-1')!;
    assert.ok(groupSize(engine.pid) >= 1);
    await supervisor.stop(engine.replica);
    assert.equal(groupSize(engine.pid), 0);
    assert.deepEqual(supervisor.list(), []);
    assert.equal(exits.length, 1);
    assert.match((await supervisor.tail(engine.replica, 200)).join('\n'), /GET \S*\/health 200/);
  });

  it('SIGKILLs the group of an engine that ignores SIGTERM once the grace is over, forked workers and all', async () => {
    const impatient = new Supervisor({ home: join(work, 'impatient-home'), stopGraceMs: 500 });
    const engine = await impatient.start({
      ...sim,
      replica: 'chat-stubborn-1',
      engine: stubbornForking,
    });
    await until('its worker to fork', () => groupSize(engine.pid) === 2);
    const asked = Date.now();
    await impatient.stop(engine.replica);
    assert.ok(Date.now() - asked >= 500, 'SIGKILL only after the grace');
    assert.equal(groupSize(engine.pid), 0);
    assert.match((await impatient.tail(engine.replica, 1))[0], /^SIGTERM: not stopping$/);
    impatient.close();
  });

  it('fails a start whose engine exits first, saying how and what it logged', async () => {
    await assert.rejects(
      supervisor.start({ ...sim, replica: 'chat-broken-1', engine: { kind: 'sim', fail_start: true } }),
      (error: Error) => {
        assert.match(error.message, /^the engine exited with code 1; its log ends:\n/);
        assert.match(error.message, /the simulated engine failed to start \(its profile says fail_start\)$/);
        return true;
      },
    );
    assert.deepEqual(supervisor.list(), []);
    assert.equal(exits.length, 1, 'a start that fails is the start call’s failure, not a second report');
  });

  it('stops an engine not ready within its start timeout, and says so', async () => {
    await assert.rejects(
      supervisor.start({
        ...sim,
        replica: 'chat-silent-1',
        engine: {
          kind: 'command',
          argv: ['sh', '-c', 'echo loading forever; exec sleep 600'],
          start_timeout_s: 1,
        },
      }),
      {
        message:
          /^the engine was not ready within 1 s, so it was stopped; its log ends:\n(.|\n)*loading forever$/,
      },
    );
    assert.deepEqual(supervisor.list(), []);
  });

  it('says so when the program is not there', async () => {
    await assert.rejects(
      supervisor.start({
        ...sim,
        replica: 'chat-missing-1',
        engine: { kind: 'command', argv: ['no-such-engine-here'] },
      }),
      { message: /^could not run no-such-engine-here: spawn no-such-engine-here ENOENT/ },
    );
  });

  it('refuses a start whose runtime names a secret this node does not have, saying where to put it', async () => {
    await assert.rejects(
      supervisor.start({ ...sim, replica: 'chat-secretless-1', secretEnv: { HF_TOKEN: 'hf-token' } }),
      {
        message: `the secret "hf-token" (for HF_TOKEN) is not on this node: put it in ${join(home, 'secrets', 'hf-token')}`,
      },
    );
    assert.ok(!supervisor.list().some((r) => r.replica === 'chat-secretless-1'));
  });

  describe('on a node whose nvidia-smi lists 8 GPUs', () => {
    const bin = join(work, 'bin');
    const seen = (replica: string) => JSON.parse(readFileSync(join(work, `${replica}.env`), 'utf8'));

    before(() => {
      mkdirSync(bin, { recursive: true });
      const rows = Array.from({ length: 8 }, (_, i) => `${i}, NVIDIA H100 80GB HBM3, 81559 MiB`).join('\n');
      writeFileSync(join(bin, 'nvidia-smi'), `#!/bin/sh\ncat <<'EOF'\n${rows}\nEOF\n`);
      chmodSync(join(bin, 'nvidia-smi'), 0o755);
    });

    it('gives two 4-GPU replicas disjoint CUDA_VISIBLE_DEVICES, as their engines saw them', async () => {
      const node = await detectCapacity({}, { env: { PATH: `${bin}:${process.env.PATH}` } });
      assert.equal(node.capacity.gpus, 8);
      assert.equal(node.gpuModel, 'H100');
      const gpus = new GpuAllocator(node.gpuIndices);
      for (const replica of ['big-1', 'big-2']) {
        await supervisor.start({
          replica,
          model: 'big',
          engine: envWriter(join(work, `${replica}.env`)),
          gpus: gpus.allocate(replica, 4),
        });
      }
      assert.equal(seen('big-1').CUDA_VISIBLE_DEVICES, '0,1,2,3');
      assert.equal(seen('big-2').CUDA_VISIBLE_DEVICES, '4,5,6,7');
      assert.equal(seen('big-1').CUDA_DEVICE_ORDER, 'PCI_BUS_ID');
      // The engine's environment is scrubbed: the basics, not llmgw's own variables.
      assert.ok(seen('big-1').PATH);
      assert.equal(
        Object.keys(seen('big-1')).some((name) => /^(LLMGW_|DATABASE_URL|TEMPORAL_)/.test(name)),
        false,
      );
      assert.throws(() => gpus.allocate('big-3', 1), {
        message: 'replica big-3 needs 1 GPUs and 0 of 8 are free',
      });
    });

    it('a restarted agent adopts the engines still serving, and drops those gone', async () => {
      const [first, second] = supervisor.list();
      supervisor.close();
      process.kill(-second.pid, 'SIGKILL');
      await until('the engine to go', () => groupSize(second.pid) === 0);
      const restartedExits: EngineExit[] = [];
      supervisor = new Supervisor({ home, onExit: (exit) => restartedExits.push(exit) });
      const found = await supervisor.adopt();
      assert.deepEqual(found, { adopted: [first], gone: [second], silent: [] });
      assert.deepEqual(supervisor.list(), [first]);
      // An adopted engine is no child of this agent: its end is found by looking, and reported all the same.
      process.kill(first.pid, 'SIGKILL');
      await until('the adopted engine’s end to be reported', () => restartedExits.length === 1, 5000);
      assert.match(
        restartedExits[0].reason,
        new RegExp(`^the engine \\(pid ${first.pid}\\) ended while it was adopted`),
      );
      assert.deepEqual(supervisor.list(), []);
      assert.equal(exits.length, 1, 'the agent that was stopped reports nothing more');
    });

    it('a restarted agent keeps an engine that runs but does not answer, and replaces it when asked to start it', async () => {
      // As an agent killed while its engine loaded would leave it: running, listed, not serving.
      const loading = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
      const record = silentRecord('chat-loading-1', loading.pid!);
      writeFileSync(join(home, 'engines.json'), JSON.stringify({ engines: [record] }));
      const restarted = new Supervisor({ home });
      assert.deepEqual(await restarted.adopt(), { adopted: [], gone: [], silent: [record] });
      const engine = await restarted.start({ ...sim, replica: 'chat-loading-1' });
      assert.equal(groupSize(loading.pid!), 0);
      assert.notEqual(engine.pid, loading.pid);
      assert.deepEqual(
        restarted.list().map((r) => r.pid),
        [engine.pid],
      );
      await restarted.stop(engine.replica);
      restarted.close();
    });

    it('a restarted agent kills what is left of an engine whose leading process died meanwhile', async () => {
      const engine = await supervisor.start({ ...sim, replica: 'chat-forking-1', engine: stubbornForking });
      await until('its worker to fork', () => groupSize(engine.pid) === 2);
      supervisor.close();
      process.kill(engine.pid, 'SIGKILL');
      await until('its leader to go', () => groupSize(engine.pid) === 1);
      supervisor = new Supervisor({ home });
      const found = await supervisor.adopt();
      assert.deepEqual(
        found.gone.map((r) => r.replica),
        ['chat-forking-1'],
      );
      await until('its worker to be killed', () => groupSize(engine.pid) === 0);
      assert.deepEqual(supervisor.list(), []);
    });
  });
});
