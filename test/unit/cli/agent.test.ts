// `llmgw agent` (src/cli/agent.ts) refuses what it cannot run with, in one sentence, before it calls
// anything: no node, no token, a bad label, capacity or heartbeat. It running is tested end to end
// (test/e2e/agents.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runAgent } from '../../../src/cli/agent.ts';

describe('llmgw agent', () => {
  const token = { LLMGW_TOKEN: 'llmgw_x' };
  const CASES: [string[], NodeJS.ProcessEnv, RegExp][] = [
    [[], token, /^agent needs --node\n/],
    [['--node', 'gpu-1'], {}, /^agent needs its agent token: --token or LLMGW_TOKEN$/],
    [['--node', 'gpu-1', '--label', 'zone'], token, /^--label takes k=v, not "zone"$/],
    [['--node', 'gpu-1', '--capacity', 'gpus=x'], token, /^--capacity gpus must be a number, not "x"$/],
    [['--node', 'gpu-1', '--bogus'], token, /^agent: Unknown option '--bogus'$/],
    [
      ['--node', 'gpu-1'],
      { ...token, LLMGW_AGENT_HEARTBEAT_S: '0' },
      /^LLMGW_AGENT_HEARTBEAT_S must be a number > 0, not "0"$/,
    ],
  ];
  for (const [args, env, sentence] of CASES) {
    it(`refuses "${args.join(' ')}" saying ${sentence}`, async () => {
      await assert.rejects(runAgent(args, { ...env }), (error: Error) => sentence.test(error.message));
    });
  }

  it('keeps its token from the engines it starts: LLMGW_TOKEN leaves its environment once read', async () => {
    const env: NodeJS.ProcessEnv = { ...token, LLMGW_AGENT_HEARTBEAT_S: '0' };
    await assert.rejects(runAgent(['--node', 'gpu-1'], env));
    assert.equal(env.LLMGW_TOKEN, undefined);
  });
});
