import assert from 'node:assert/strict';
import { type ChildProcess, execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { freePortBlock } from '../../src/cli/dev/ports.ts';
import { eventually } from '../support/stack.ts';
import { stackEnvironment } from '../support/stack-environment.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/**
 * `npm start` (or another npm script) as a user runs it, with its own data folder and free ports, in an
 * environment made from `parent` without the llmgw settings a caller's shell may hold.
 */
async function npmStart(
  home: string,
  ports: Record<string, number>,
  more: Record<string, string> = {},
  options: { parent?: NodeJS.ProcessEnv; script?: string } = {},
) {
  const env = stackEnvironment(
    {
      ...more,
      LLMGW_HOME: home,
      PORT: String(ports.api),
      LLMGW_TEMPORAL_PORT: String(ports.temporal),
      LLMGW_TEMPORAL_UI_PORT: String(ports.ui),
      LLMGW_POSTGRES_PORT: String(ports.postgres),
      LLMGW_GATEWAY_PORT: String(ports.gateway),
    },
    options.parent,
  );
  let output = '';
  const command = options.script ? ['run', options.script] : ['start'];
  const child = spawn('npm', command, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return { child, output: () => output };
}
type Stack = Awaited<ReturnType<typeof npmStart>>;
const EXITED = Symbol('the stack exited');

/**
 * Waits for `check` while `stack` runs: fails as soon as it exits, and either way with the end of what
 * it printed (without it, a stack that never came up left nothing to tell why).
 */
async function whileRunning<T>(
  stack: Stack,
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 120_000,
): Promise<T> {
  const printed = () => `; it printed:\n${stack.output().slice(-4000)}`;
  const outcome = await Promise.race([
    eventually(what, check, timeoutMs),
    exited(stack.child).then((): typeof EXITED => EXITED),
  ]).catch((error: Error) => {
    throw new Error(`${error.message}${printed()}`);
  });
  if (outcome === EXITED)
    throw new Error(`the stack exited (${stack.child.exitCode}) before ${what}${printed()}`);
  return outcome;
}

/** PIDs of processes whose command line mentions `text` (the data folder is unique to this test). */
const processesMentioning = (text: string) =>
  execFileSync('ps', ['-eo', 'pid=,args='], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes(text) && !line.includes('ps -eo'))
    .map((line) => line.trim());

/** The processes `pid` started, and the ones they started, and so on (Linux). */
function descendants(pid: number): number[] {
  const parents = readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .flatMap((entry) => {
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        return [[Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])]];
      } catch {
        return []; // it ended meanwhile
      }
    });
  const children = (of: number): number[] =>
    parents.filter(([, parent]) => parent === of).flatMap(([child]) => [child, ...children(child)]);
  return children(pid);
}

const environOf = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'utf8');
  } catch {
    return ''; // it ended meanwhile
  }
};

/** What a caller's shell may hold that would point a stack elsewhere, had it been let through. */
const POISONED_SHELL = {
  ...process.env,
  LLMGW_ADMIN_TOKEN: 'a-shell-admin-token-that-no-stack-may-use-0123456789',
  LLMGW_SIM_CLUSTER: '/nonexistent/cluster.yaml',
  DATABASE_URL: 'postgres://nobody:nothing@127.0.0.1:1/none',
  TEMPORAL_ADDRESS: '127.0.0.1:1',
  PORT: '1',
};

/**
 * Five free ports in a row, below Linux's ephemeral range: the free ports that the Temporal dev server
 * draws for its own services, and outgoing connections, come from that range while the stack starts.
 */
const freePorts = async () => {
  const first = await freePortBlock(5);
  return { api: first, temporal: first + 1, ui: first + 2, postgres: first + 3, gateway: first + 4 };
};

const exited = (child: ChildProcess) =>
  new Promise<number | null>((resolve) => {
    if (child.exitCode !== null) return resolve(child.exitCode);
    child.once('exit', (code) => resolve(code));
  });

describe('npm start (llmgw dev)', () => {
  const home = mkdtempSync(join(tmpdir(), 'llmgw-dev-'));
  after(() => rmSync(home, { recursive: true, force: true }));

  it('comes up with an admin token shown once, keeps its data across a restart, and leaves no process behind when killed', async () => {
    const ports = await freePorts();
    const api = `http://127.0.0.1:${ports.api}`;

    // Started from a shell whose llmgw settings would break it: the harness leaves them out.
    const first = await npmStart(home, ports, {}, { parent: POISONED_SHELL });
    await whileRunning(
      first,
      'the API ready',
      async () => (await fetch(`${api}/readyz`).catch(() => null))?.status === 200,
    );
    // The API answers before the banner that lists every part is printed, once all of them are up.
    await whileRunning(first, 'the banner printed', async () =>
      new RegExp(`Temporal UI  http://127.0.0.1:${ports.ui}`).test(first.output()),
    );
    assert.equal((await fetch(`http://127.0.0.1:${ports.ui}/`)).status, 200, 'the Temporal Web UI answers');
    assert.match(first.output(), new RegExp(`Gateway      http://127.0.0.1:${ports.gateway}/v1`));
    const gateway = await fetch(`http://127.0.0.1:${ports.gateway}/v1/models`);
    assert.equal(gateway.status, 401, 'the gateway answers, and wants a key');
    const token = await whileRunning(
      first,
      'the admin token printed',
      async () => /Admin token {2}(llmgw_\S+)/.exec(first.output())?.[1],
    );
    const authorization = `Bearer ${token}`;
    assert.equal((await fetch(`${api}/api/v1/orgs`)).status, 401, 'the API wants a token');
    const created = await fetch(`${api}/api/v1/orgs`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization },
      body: JSON.stringify({ name: 'Persisted' }),
    });
    assert.equal(created.status, 201);
    assert.ok(
      processesMentioning(home).length >= 2,
      'Postgres and the Temporal dev server run with the data folder',
    );

    first.child.kill('SIGTERM');
    await exited(first.child);
    await eventually('every child process gone', async () => processesMentioning(home).length === 0, 30_000);

    const adminSecret = 'dev-stack-admin-secret-4f9c2a7e1b8d3c6f0a5e';
    const second = await npmStart(home, ports, { LLMGW_ADMIN_TOKEN: adminSecret });
    await whileRunning(
      second,
      'the API ready again',
      async () => (await fetch(`${api}/readyz`).catch(() => null))?.status === 200,
    );
    // llmgw itself holds the admin token; none of the processes it started (Postgres and its backends,
    // the Temporal dev server, esbuild) has it in its environment.
    const [llmgw] = descendants(second.child.pid!).filter((pid) =>
      readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('bin/llmgw.mjs'),
    );
    const started = descendants(llmgw);
    assert.ok(started.length >= 2, 'Postgres and the Temporal dev server run');
    for (const pid of started) {
      assert.ok(
        !environOf(pid).includes(adminSecret),
        `process ${pid} has no admin token in its environment`,
      );
    }
    const orgs = await (await fetch(`${api}/api/v1/orgs`, { headers: { authorization } })).json();
    assert.deepEqual(
      orgs.map((org: { name: string }) => org.name),
      ['Persisted'],
    );
    await whileRunning(second, 'the second start says it is up', async () =>
      /llmgw is up\./.test(second.output()),
    );
    assert.doesNotMatch(second.output(), /Admin token/, 'the admin token is shown on the first start only');
    second.child.kill('SIGTERM');
    await exited(second.child);
    await eventually('every child process gone', async () => processesMentioning(home).length === 0, 30_000);
  });

  it('refuses a port in use with the variable that moves it', async () => {
    const busy = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => busy.once('listening', resolve));
    const taken = (busy.address() as { port: number }).port;
    try {
      const ports = { ...(await freePorts()), api: taken };
      const run = await npmStart(home, ports);
      const code = await exited(run.child);
      assert.notEqual(code, 0);
      assert.match(
        run.output(),
        new RegExp(`port ${taken} is in use \\(PORT\\); stop what uses it, or set PORT`),
      );
    } finally {
      busy.close();
    }
  });

  it("answers the chat completion of the README's first look and gateway block, pasted in order", async () => {
    const readmeHome = mkdtempSync(join(tmpdir(), 'llmgw-readme-'));
    const ports = await freePorts();
    const stack = await npmStart(readmeHome, ports);
    try {
      await whileRunning(stack, 'llmgw up', async () => /llmgw is up\./.test(stack.output()));
      const token = /Admin token {2}(llmgw_\S+)/.exec(stack.output())?.[1];
      assert.ok(token, 'the admin token printed');
      // The two blocks as a user pastes them, on the ports this stack chose and with its token.
      const section = readFileSync(join(ROOT, 'README.md'), 'utf8')
        .split('## A first look')[1]
        .split('\n## ')[0];
      const blocks = [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]);
      assert.equal(blocks.length, 2, 'the first look and the gateway block');
      // A marker between the blocks, since curl ends its output with no newline.
      const script = blocks
        .join('\necho; echo "-- the gateway block --"\n')
        .replace(/export LLMGW_TOKEN=\S+/, `export LLMGW_TOKEN=${token}`)
        .replaceAll('localhost:8080', `127.0.0.1:${ports.api}`)
        .replaceAll('localhost:8000', `127.0.0.1:${ports.gateway}`);
      const { stdout } = await promisify(execFile)('bash', ['-c', script], {
        cwd: ROOT,
        env: stackEnvironment({ LLMGW_URL: `http://127.0.0.1:${ports.api}` }),
        timeout: 120_000,
      });
      const answer = JSON.parse(stdout.split('-- the gateway block --\n')[1]);
      assert.equal(answer.object, 'chat.completion', `the last line answers the chat completion:\n${stdout}`);
      assert.ok(answer.choices[0].message.content.length > 0);
    } finally {
      stack.child.kill('SIGTERM');
      await exited(stack.child);
      rmSync(readmeHome, { recursive: true, force: true });
    }
  });

  it('prints demo hints that work on the port PORT chose', async () => {
    const demoHome = mkdtempSync(join(tmpdir(), 'llmgw-demo-'));
    const ports = await freePorts();
    const demo = await npmStart(demoHome, ports, {}, { script: 'demo' });
    try {
      await whileRunning(demo, 'the demo up', async () => /llmgw is up\./.test(demo.output()));
      const token = /Admin token {2}(llmgw_\S+)/.exec(demo.output())?.[1];
      assert.ok(token, 'the admin token printed');
      const hint = /((?:\S+=\S+ )*npx llmgw ctl [^)\n]*)/.exec(demo.output())?.[1];
      assert.ok(hint, `a ctl hint printed:\n${demo.output()}`);
      const { stdout } = await promisify(execFile)('sh', ['-c', hint], {
        cwd: ROOT,
        env: stackEnvironment({ LLMGW_TOKEN: token }),
      });
      for (const model of ['chat', 'code', 'embed']) assert.match(stdout, new RegExp(`\\b${model}\\b`));
    } finally {
      demo.child.kill('SIGTERM');
      await exited(demo.child);
      rmSync(demoHome, { recursive: true, force: true });
    }
  });
});
