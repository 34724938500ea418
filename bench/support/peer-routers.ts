// The Rust routers llmgw's gateway is measured against: vllm-router and sglang-router, pinned, from
// PyPI, each in a virtualenv under ~/.cache/llmgw (as scripts/test-tools.sh keeps the test tools), made
// once per machine. Each is started in front of given engines and stopped by the caller.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { closedPort } from '../../test/support/ports.ts';

export const PEERS = {
  'vllm-router': { package: 'vllm-router', version: '0.1.17' },
  'sglang-router': { package: 'sglang-router', version: '0.3.2' },
} as const;
export type PeerName = keyof typeof PEERS;

const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'llmgw');

/** The peer's virtualenv, installed first if it is not there (pip, a minute or so once). */
export function installPeer(name: PeerName): string {
  const { package: pkg, version } = PEERS[name];
  const venv = join(cache, `${pkg}-v${version}`);
  const marker = join(venv, '.installed');
  if (existsSync(marker)) return venv;
  console.error(`installing ${pkg} ${version} from PyPI into ${venv} (once per machine)...`);
  execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
  execFileSync(join(venv, 'bin', 'pip'), ['install', '-q', `${pkg}==${version}`], { stdio: 'inherit' });
  execFileSync('touch', [marker]);
  return venv;
}

export interface RunningPeer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * The peer router on `port` in front of `workers` (base URLs without /v1), with `policy`; resolves once
 * it answers. Its health checks and logs are quiet; its retries, as llmgw's, on.
 */
export async function startPeer(
  name: PeerName,
  port: number,
  workers: string[],
  policy: string,
): Promise<RunningPeer> {
  const venv = installPeer(name);
  // Each exports Prometheus metrics on a port of its own (29000 by default: two would clash).
  const common = [
    ...['--host', '127.0.0.1', '--port', String(port), '--policy', policy],
    ...['--prometheus-port', String(await closedPort()), '--worker-urls', ...workers],
  ];
  const child =
    name === 'sglang-router'
      ? spawn(
          join(venv, 'bin', 'python'),
          ['-m', 'sglang_router.launch_router', ...common, '--log-level', 'error'],
          {
            stdio: ['ignore', 'ignore', 'pipe'],
          },
        )
      : spawn(join(venv, 'bin', 'vllm-router'), [...common, '--log-level', 'error'], {
          stdio: ['ignore', 'ignore', 'pipe'],
        });
  let errors = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    errors = (errors + chunk.toString()).slice(-4000);
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited ${child.exitCode}: ${errors}`);
    try {
      const answer = await fetch(`${url}/v1/models`, { signal: AbortSignal.timeout(1000) });
      await answer.body?.cancel();
      if (answer.ok) break;
    } catch {}
    if (Date.now() > deadline) throw new Error(`${name} did not answer within 60 s: ${errors}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      const killed = setTimeout(() => child.kill('SIGKILL'), 5000);
      await new Promise((resolve) => child.once('exit', resolve));
      clearTimeout(killed);
    },
  };
}
