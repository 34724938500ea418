// Issue 30's HIGH finding replayed through the real API, a real `llmgw agent` process and a real engine
// process: an operator's model that would run a command (or vLLM with --trust-remote-code, a model at
// /etc, LD_PRELOAD) on the node is refused, and nothing runs; an admin's runtime, chosen by the
// operator's profile with a checked parameter, runs as the unprivileged user the agent was given
// (--engine-user nobody); the engine's environment holds none of the agent's secrets, and it cannot
// read the agent's own (/proc/<agent>/environ), which holds the agent's token.
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type AgentProcess, agentGrant, engineRecords, killEngines, spawnAgent } from '../support/agents.ts';
import { FAST, gpuProfile, ok, settledAt } from '../support/cluster.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * The sim engine as one script that user nobody can run: a clone made by root in a folder closed to
 * others (mktemp -d) is out of nobody's reach, so the engine is bundled into a folder of its own.
 */
async function engineNobodyRuns(): Promise<{ folder: string; script: string }> {
  const folder = mkdtempSync(join(tmpdir(), 'llmgw-engine-'));
  chmodSync(folder, 0o755);
  const { simEngineBundle } = await import('../../bin/sim-engine-bundle.mjs');
  const bundle: string | null = simEngineBundle({ root: ROOT, cacheDir: folder });
  assert.ok(bundle, 'the sim engine bundles (esbuild)');
  const script = join(folder, 'run-sim-engine.cjs');
  writeFileSync(
    script,
    `require(${JSON.stringify(bundle)}).runSimEngine(process.argv.slice(2)).catch((error) => {
  console.error(String(error));
  process.exit(1);
});\n`,
  );
  for (const file of [bundle!, script]) chmodSync(file, 0o644);
  return { folder, script };
}
const NOBODY = 65534;

describe('tenants run nothing of their own on nodes: runtimes run as an unprivileged user', () => {
  let stack: Stack;
  let work: string;
  let home: string;
  let agent: AgentProcess;
  let agentToken: string;
  let operator: Record<string, string>;
  let simEngine: { folder: string; script: string };
  const marker = () => join(work, 'pwned');

  before(async () => {
    assert.equal(
      process.getuid?.(),
      0,
      'this test runs the agent as root, with --engine-user nobody: run it as root',
    );
    work = mkdtempSync(join(tmpdir(), 'llmgw-runtimes-'));
    simEngine = await engineNobodyRuns();
    home = join(work, 'agent');
    mkdirSync(join(home, 'secrets'), { recursive: true });
    stack = await startStack({ worker: true, env: { ...FAST, LLMGW_NODE_LOST_S: '10' } });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Acme' });
    await ok(stack, 'POST', '/api/v1/teams', { org: 'Acme', name: 'ml' });
    operator = {
      authorization: `Bearer ${await stack.token({ name: 'ml-op', role: 'operator', scope: 'team:Acme/ml' })}`,
    };
    agentToken = await stack.token({ ...agentGrant('iso-a'), name: 'agent-iso' });
    agent = spawnAgent(stack, 'iso-a', agentToken, home, 'gpus=2,cores=24,memory_gib=256', [
      '--engine-user',
      'nobody',
    ]);
    await eventually(
      'the agent registered',
      async () =>
        (await ok<any[]>(stack, 'GET', '/api/v1/nodes')).some(
          (n) => n.name === 'iso-a' && n.state === 'ready',
        ),
      60_000,
    );
  });
  after(async () => {
    agent?.child.kill('SIGKILL');
    if (home) killEngines(home);
    await stack?.stop();
    if (work) rmSync(work, { recursive: true, force: true });
    if (simEngine) rmSync(simEngine.folder, { recursive: true, force: true });
  });

  it("refuses the operator's models that would run its own command, flags, path or variables on the node", async () => {
    const attacks: Record<string, unknown>[] = [
      { kind: 'command', argv: ['sh', '-c', `id > ${marker()}`] },
      { kind: 'vllm', model: 'Qwen/Qwen2.5-0.5B', args: ['--trust-remote-code'] },
      { kind: 'vllm', model: '/etc' },
      { kind: 'command', argv: ['/usr/bin/env'], env: { LD_PRELOAD: `${work}/x.so`, PATH: work } },
    ];
    for (const [i, engine] of attacks.entries()) {
      const answer = await stack.call(
        'PUT',
        `/api/v1/models/attack-${i}`,
        {
          owner: 'team:Acme/ml',
          min_replicas: 1,
          max_replicas: 1,
          profiles: [gpuProfile('h100', 1, { engine })],
        },
        operator,
      );
      assert.equal(answer.status, 403, JSON.stringify(answer.body));
      assert.match(
        answer.body.error,
        /may not write an inline engine \(profile "h100", engine\.\w+\): only an admin may/,
      );
      assert.equal((await stack.call('GET', `/api/v1/models/attack-${i}`)).status, 404);
    }
    assert.deepEqual(await ok(stack, 'GET', '/api/v1/replicas'), []);
    assert.equal(existsSync(marker()), false);
  });

  it("runs an admin's runtime that the operator's profile names, as nobody, with none of the agent's secrets", async () => {
    // The runtime's own script says, in the engine's log, whether it could read the agent's environment
    // and what its own holds; then it becomes the sim engine, filled with the operator's checked batch.
    const probe = [
      'if cat /proc/$PPID/environ > /dev/null 2>&1; then echo "agent environ: read"; else echo "agent environ: refused"; fi',
      'echo "engine uid: $(id -u)"',
      'echo "engine sees LLMGW variables: $(env | grep -c ^LLMGW_)"',
      'exec "$0" "$@"',
    ].join('; ');
    await ok(stack, 'PUT', '/api/v1/runtimes/probed-sim', {
      kind: 'command',
      argv: [
        '/bin/sh',
        '-c',
        probe,
        process.execPath,
        simEngine.script,
        '--port',
        '{port}',
        '--model',
        '{model}',
        '--replica',
        '{replica}',
        '--max-batch',
        '{params.batch}',
      ],
      secret_env: { HF_TOKEN: 'hf-token' },
      params: { batch: { type: 'integer', min: 1, max: 16 } },
      start_timeout_s: 60,
    });
    // The secret lives on the node, read by the agent (root) and handed to the engine alone.
    writeFileSync(join(home, 'secrets', 'hf-token'), 'hf_node_secret\n', { mode: 0o600 });

    const spec = (batch: unknown) => ({
      owner: 'team:Acme/ml',
      min_replicas: 1,
      max_replicas: 1,
      profiles: [gpuProfile('h100', 1, { runtime: 'probed-sim', params: { batch } })],
    });
    const refused = await stack.call('PUT', '/api/v1/models/probed', spec('4 --trust-remote-code'), operator);
    assert.deepEqual(refused, {
      status: 400,
      body: {
        error: 'profile "h100": runtime "probed-sim": parameter "batch" must be a whole number from 1 to 16',
      },
    });
    assert.equal((await stack.call('PUT', '/api/v1/models/probed', spec(4), operator)).status, 201);

    const [replica] = await settledAt(stack, 'probed', 1, 90_000);
    assert.equal(replica.node, 'iso-a');
    const [engine] = engineRecords(home);
    const status = readFileSync(`/proc/${engine.pid}/status`, 'utf8');
    assert.match(status, new RegExp(`^Uid:\\s+${NOBODY}\\s+${NOBODY}\\s+${NOBODY}\\s+${NOBODY}$`, 'm'));
    const environ = readFileSync(`/proc/${engine.pid}/environ`, 'utf8').split('\0');
    assert.ok(
      !environ.some((entry) => entry.startsWith('LLMGW_') || entry.includes(agentToken)),
      environ.join(' '),
    );
    assert.ok(environ.includes('HF_TOKEN=hf_node_secret'));
    // The agent's own environment still holds its token: that is what the engine must not read.
    assert.ok(readFileSync(`/proc/${agent.child.pid}/environ`, 'utf8').includes(agentToken));

    const { lines } = await stack
      .call('GET', `/api/v1/replicas/${replica.id}/logs?tail=50`, undefined, operator)
      .then((a) => a.body);
    const log = lines.join('\n');
    assert.match(log, /^agent environ: refused$/m);
    assert.match(log, new RegExp(`^engine uid: ${NOBODY}$`, 'm'));
    assert.match(log, /^engine sees LLMGW variables: 0$/m);
    assert.ok(!log.includes(agentToken));
    assert.match(log, /run-sim-engine\.cjs --port \d+ --model probed --replica \S+ --max-batch 4$/m);

    const [{ endpoint }] = await stack.sql`select endpoint from replicas where id = ${replica.id}`;
    const models = await (await fetch(`${endpoint}/models`)).json();
    assert.equal(models.data[0].id, 'probed');
  });

  it("a viewer reads the runtime's variables by name, never a secret's value", async () => {
    const viewer = { authorization: `Bearer ${await stack.token({ name: 'v', role: 'viewer' })}` };
    const shown = await stack.call('GET', '/api/v1/runtimes/probed-sim', undefined, viewer);
    assert.deepEqual(shown.body.secret_env, { HF_TOKEN: 'hf-token' });
    assert.ok(!JSON.stringify(shown.body).includes('hf_node_secret'));
  });
});
