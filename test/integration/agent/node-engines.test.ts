// One node's engines (src/agent/node-engines.ts) with real processes: each replica gets the GPUs its
// profile asks for and gives them back however its engine ends (stopped, killed, failed to start), a
// restarted agent holds the GPUs of engines still running before it starts others, and the engines'
// loads are scraped where their metrics are known.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { NodeEngines, type ReplicaToRun } from '../../../src/agent/node-engines.ts';
import type { EngineExit } from '../../../src/agent/supervisor.ts';

const work = mkdtempSync(join(tmpdir(), 'llmgw-node-engines-'));
const home = join(work, 'home');

/** A replica of `gpus` GPUs whose engine (node) writes the CUDA_VISIBLE_DEVICES it got, then serves. */
const gpuReplica = (replica: string, gpus: number): ReplicaToRun => ({
  replica,
  model: 'big',
  profile: {
    name: 'h100x4',
    resources: { gpus },
    engine: {
      kind: 'command',
      argv: [
        process.execPath,
        '-e',
        `require('fs').writeFileSync(process.argv[2], process.env.CUDA_VISIBLE_DEVICES);
         require('http').createServer((q, s) => s.end('{}')).listen(Number(process.argv[1]), '127.0.0.1');`,
        '{port}',
        join(work, `${replica}.gpus`),
      ],
      start_timeout_s: 30,
    },
  },
});
const gpusSeen = (replica: string) => readFileSync(join(work, `${replica}.gpus`), 'utf8');

const until = async (what: string, check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 25));
  assert.ok(check(), `timed out waiting for ${what}`);
};

describe("a node's engines", () => {
  const exits: EngineExit[] = [];
  let node = new NodeEngines({
    home,
    gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7],
    onExit: (exit) => exits.push(exit),
  });
  after(async () => {
    for (const { replica } of node.supervisor.list()) await node.stop(replica);
    node.close();
    rmSync(work, { recursive: true, force: true });
  });

  it('gives each replica the GPUs its profile asks for, and refuses one that would share them', async () => {
    await node.start(gpuReplica('a', 4));
    await node.start(gpuReplica('b', 4));
    assert.equal(gpusSeen('a'), '0,1,2,3');
    assert.equal(gpusSeen('b'), '4,5,6,7');
    await assert.rejects(node.start(gpuReplica('c', 1)), {
      message: 'replica c needs 1 GPUs and 0 of 8 are free',
    });
  });

  it('takes back the GPUs of a stopped engine and of a killed one', async () => {
    await node.stop('a');
    assert.deepEqual(node.gpusOf('a'), []);
    await node.start(gpuReplica('c', 2));
    assert.equal(gpusSeen('c'), '0,1');
    const b = node.supervisor.list().find((r) => r.replica === 'b')!;
    process.kill(b.pid, 'SIGKILL');
    await until('the exit to be reported', () => exits.length === 1);
    assert.equal(exits[0].replica, 'b');
    assert.deepEqual(node.gpusOf('b'), []);
    await node.start(gpuReplica('d', 6));
    assert.equal(gpusSeen('d'), '2,3,4,5,6,7');
  });

  it('takes back the GPUs of a start that fails, and says what is wrong with a profile it cannot run', async () => {
    await node.stop('d');
    const broken = gpuReplica('e', 2);
    broken.profile.engine = { kind: 'command', argv: ['sh', '-c', 'echo no CUDA here; exit 3'] };
    await assert.rejects(node.start(broken), {
      message: /^the engine exited with code 3; its log ends:\n(.|\n)*no CUDA here$/,
    });
    assert.deepEqual(node.gpusOf('e'), []);
    await assert.rejects(node.start({ ...broken, profile: { ...broken.profile, engine: undefined } }), {
      message: 'profile h100x4 has no engine: an agent has nothing to run',
    });
    // Stored before engines had their schema: refused with the same sentence the API would give.
    await assert.rejects(
      node.start({ ...broken, profile: { ...broken.profile, engine: { kind: 'llama.cpp' } } }),
      {
        message: 'profile h100x4: engine.model is required',
      },
    );
    assert.deepEqual(node.gpusOf('e'), []);
  });

  it('after a restart, holds the GPUs of the engines still running before it starts others', async () => {
    assert.deepEqual(node.gpusOf('c'), [0, 1]);
    node.close();
    node = new NodeEngines({ home, gpuIndices: [0, 1, 2, 3, 4, 5, 6, 7] });
    const found = await node.adopt();
    assert.deepEqual(
      found.adopted.map((r) => r.replica),
      ['c'],
    );
    assert.deepEqual(node.gpusOf('c'), [0, 1]);
    await node.start(gpuReplica('f', 2));
    assert.equal(gpusSeen('f'), '2,3');
  });

  it("scrapes the loads of engines whose metrics it knows: the sim engine's, not a command's", async () => {
    await node.start({
      replica: 'sim-1',
      model: 'chat',
      profile: { name: 'sim', resources: {}, engine: { kind: 'sim' } },
    });
    await node.start({
      replica: 'sim-quiet-1',
      model: 'chat',
      profile: { name: 'sim', resources: {}, engine: { kind: 'sim', metrics: false } },
    });
    assert.deepEqual([...(await node.loads())], [['sim-1', { running: 0, waiting: 0 }]]);
  });
});
