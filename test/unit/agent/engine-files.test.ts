// The agent's files (src/agent/engine-log.ts, engine-state.ts): the tail of an engine's log read from
// its end, and engines.json, the list a restarted agent adopts from.
import assert from 'node:assert/strict';
import { appendFileSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { tailLines } from '../../../src/agent/engine-log.ts';
import { type EngineRecord, EngineStateFile } from '../../../src/agent/engine-state.ts';
import { agentHome } from '../../../src/agent/supervisor.ts';

const work = mkdtempSync(join(tmpdir(), 'llmgw-agent-files-'));
after(() => rmSync(work, { recursive: true, force: true }));

describe("an engine's log tail", () => {
  it('gives the last lines, across the blocks it reads, with or without a final newline', async () => {
    const log = join(work, 'big.log');
    // About 390 KiB: the lines wanted span more than one 64 KiB block.
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i} ${'x'.repeat(i % 7)}`);
    writeFileSync(log, `${lines.join('\n')}\n`);
    assert.deepEqual(await tailLines(log, 3), lines.slice(-3));
    assert.deepEqual(await tailLines(log, 12_000), lines.slice(-12_000));
    appendFileSync(log, 'no newline yet');
    assert.deepEqual(await tailLines(log, 2), [lines.at(-1), 'no newline yet']);
  });

  it('gives what there is of a short log, and nothing of a missing one or for 0 lines', async () => {
    const log = join(work, 'short.log');
    writeFileSync(log, 'one\ntwo\n');
    assert.deepEqual(await tailLines(log, 10), ['one', 'two']);
    assert.deepEqual(await tailLines(log, 0), []);
    assert.deepEqual(await tailLines(join(work, 'none.log'), 5), []);
  });
});

describe("the agent's home", () => {
  it('is LLMGW_AGENT_HOME, else ~/.llmgw-agent', () => {
    assert.equal(agentHome({ LLMGW_AGENT_HOME: '/var/lib/llmgw-agent' }), '/var/lib/llmgw-agent');
    assert.equal(agentHome({ LLMGW_AGENT_HOME: '' }), join(homedir(), '.llmgw-agent'));
    assert.equal(agentHome({}), join(homedir(), '.llmgw-agent'));
  });
});

describe('engines.json', () => {
  const record = (replica: string, pid: number): EngineRecord => ({
    replica,
    model: 'chat',
    engine: { kind: 'sim' },
    pid,
    port: 40_000 + pid,
    url: `http://127.0.0.1:${40_000 + pid}`,
    gpus: [],
    log: `/logs/${replica}.log`,
    started_at: '2026-12-01T00:00:00.000Z',
  });

  it('keeps one record per replica, replaced whole, through a rename that leaves no other file', () => {
    const state = new EngineStateFile(join(work, 'home', 'engines.json'));
    assert.deepEqual(state.read(), []);
    state.put(record('a', 1));
    state.put(record('b', 2));
    state.put(record('a', 3));
    assert.deepEqual(state.read(), [record('b', 2), record('a', 3)]);
    state.remove('b');
    state.remove('nobody');
    assert.deepEqual(new EngineStateFile(state.path).read(), [record('a', 3)]);
    assert.deepEqual(readdirSync(join(work, 'home')), ['engines.json']);
  });

  it('says so when the file is not the list it writes', () => {
    const path = join(work, 'odd.json');
    writeFileSync(path, '{"replicas": []}');
    assert.throws(() => new EngineStateFile(path).read(), { message: `${path} holds no "engines" list` });
    assert.ok(existsSync(path));
  });
});
