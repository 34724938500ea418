// `llmgw agent` (src/cli/agent.ts) refuses what it cannot run with, in one sentence, before it calls
// anything: no node, no token, a bad label, capacity or heartbeat. It running is tested end to end
// (test/e2e/agents.test.ts).
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { runAgent } from '../../../src/cli/agent.ts';
import { closedPort } from '../../support/ports.ts';

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

  describe('finds the API at LLMGW_URL, or at LLMGW_API_URL with a deprecation line', () => {
    // An API that refuses every registration: the refusal shows the agent reached it.
    const api = createServer((_, response) => {
      response.writeHead(403, { 'content-type': 'application/json' }).end('{"error":"not this node"}');
    });
    let url = '';
    before(async () => {
      await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
    });
    after(() => api.close());
    // As root the agent needs an unprivileged user for its engines before it calls anything.
    const engineUser = process.getuid?.() === 0 ? 'nobody' : String(process.getuid?.());
    const args = ['--node', 'gpu-1', '--capacity', 'cores=1,memory_gib=1', '--engine-user', engineUser];

    for (const [variable, deprecated] of [
      ['LLMGW_URL', false],
      ['LLMGW_API_URL', true],
    ] as const) {
      it(`reaches the API at ${variable}`, async (t) => {
        const warn = t.mock.method(console, 'warn', () => {});
        await assert.rejects(
          runAgent(args, { ...token, [variable]: url }),
          /^Error: PUT \/ of node gpu-1: 403 not this node$/,
        );
        assert.deepEqual(
          warn.mock.calls.map((call) => call.arguments[0]),
          deprecated ? ['LLMGW_API_URL is deprecated: name the API with LLMGW_URL, as llmgw ctl does'] : [],
        );
      });
    }

    it('names the URL it could not reach', async () => {
      const port = await closedPort();
      await assert.rejects(
        runAgent(args, { ...token, LLMGW_URL: `http://127.0.0.1:${port}` }),
        new RegExp(
          `^Error: cannot reach the llmgw API at http://127\\.0\\.0\\.1:${port}/api/v1/nodes/gpu-1: .*ECONNREFUSED`,
        ),
      );
    });
  });

  it('keeps its token from the engines it starts: LLMGW_TOKEN leaves its environment once read', async () => {
    const env: NodeJS.ProcessEnv = { ...token, LLMGW_AGENT_HEARTBEAT_S: '0' };
    await assert.rejects(runAgent(['--node', 'gpu-1'], env));
    assert.equal(env.LLMGW_TOKEN, undefined);
  });
});
