// `llmgw sim-engine` (src/cli/sim-engine.ts) refuses bad flags in one sentence, and fails at once when
// told to; it serving as a process is tested through the agent's supervisor (test/integration/agent).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const LLMGW = join(import.meta.dirname, '..', '..', '..', 'bin', 'llmgw.mjs');
const run = (...args: string[]) =>
  spawnSync(process.execPath, [LLMGW, 'sim-engine', ...args], { encoding: 'utf8', timeout: 60_000 });

describe('llmgw sim-engine', () => {
  const CASES: [string[], string][] = [
    [['--port', 'x'], 'llmgw: --port must be a whole number >= 0, not "x"'],
    [['--port', '1', '--max-batch', '2.5'], 'llmgw: --max-batch must be a whole number >= 0, not "2.5"'],
    [['--port', '1', '--base-tpot-ms=-3'], 'llmgw: --base-tpot-ms must be a number >= 0, not "-3"'],
    [['--port', '1', '--bogus'], "llmgw: sim-engine: Unknown option '--bogus'"],
    [['--port'], "llmgw: sim-engine: Option '--port <value>' argument missing"],
    [['--port', '1', '--fail-start'], 'the simulated engine failed to start (its profile says fail_start)'],
  ];
  for (const [args, sentence] of CASES) {
    it(`exits 1 on "${args.join(' ')}", saying: ${sentence}`, () => {
      const { status, stderr } = run(...args);
      assert.equal(status, 1);
      assert.equal(stderr.trim(), sentence);
    });
  }

  it('needs --port, and says how it is run', () => {
    const { status, stderr } = run();
    assert.equal(status, 1);
    assert.match(stderr, /^llmgw: sim-engine needs --port\n\nusage: llmgw sim-engine --port PORT/);
    assert.match(run('--help').stdout, /^usage: llmgw sim-engine/);
  });
});
