import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { Connection } from '@temporalio/client';
import { childEnvironment, startService } from '../../child-process.ts';
import { SEARCH_ATTRIBUTE_FLAGS } from '../../workflows/search-attributes.ts';

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'scripts', 'temporal-cli.sh');

/**
 * What the script needs beyond the basics: where a CLI or its cache is, what Go and curl need to install
 * one, and the period of its progress lines (scripts/progress.sh).
 */
const INSTALLER_VARIABLES =
  /^(TEMPORAL_CLI|XDG_CACHE_HOME|LLMGW_PROGRESS_EVERY_S|GO(PATH|ROOT|BIN|PROXY|FLAGS|CACHE|MODCACHE|PRIVATE|NOPROXY|NOSUMDB|SUMDB|INSECURE|TOOLCHAIN|ENV)|(HTTPS?|NO|ALL)_PROXY|(https?|no|all)_proxy|SSL_CERT_(FILE|DIR))$/;

/**
 * Finds or installs the Temporal CLI through scripts/temporal-cli.sh (one rule for dev, tests and CI).
 * What the script says (a build's progress, every 10 s) goes to `log` as it comes.
 */
export async function findTemporalCli(log: (line: string) => void = () => {}): Promise<string> {
  const script = spawn('bash', [SCRIPT], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: childEnvironment({ passes: INSTALLER_VARIABLES }),
  });
  let path = '';
  script.stdout.on('data', (chunk) => (path += chunk));
  let lastLine = '';
  createInterface({ input: script.stderr }).on('line', (line) => {
    lastLine = line;
    log(line);
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    script.once('error', reject);
    script.once('close', resolve);
  });
  if (code !== 0) throw new Error(lastLine.replace(/^temporal-cli: /, '') || `${SCRIPT} exited with ${code}`);
  return path.trim();
}

export interface TemporalDevServer {
  address: string;
  uiUrl: string | null;
  stop(): Promise<void>;
}

/**
 * Runs `temporal server start-dev` with llmgw's search attributes registered (unless `searchAttributes`
 * is false: a Temporal that is not ours, for tests) and waits until it answers. `dbFile` keeps its
 * state across restarts; without it the state lives in memory.
 */
export async function startTemporalDevServer(options: {
  cli: string;
  port: number;
  uiPort?: number;
  dbFile?: string;
  namespace?: string;
  searchAttributes?: boolean;
  log?: (line: string) => void;
}): Promise<TemporalDevServer> {
  const args = [
    'server',
    'start-dev',
    '--ip',
    '127.0.0.1',
    '--port',
    String(options.port),
    '--log-level',
    'warn',
  ];
  if (options.dbFile) args.push('--db-filename', options.dbFile);
  if (options.uiPort) args.push('--ui-port', String(options.uiPort));
  else args.push('--headless');
  if (options.namespace && options.namespace !== 'default') args.push('--namespace', options.namespace);
  if (options.searchAttributes ?? true) {
    for (const flag of SEARCH_ATTRIBUTE_FLAGS) args.push('--search-attribute', flag);
  }

  const server = startService(options.cli, args, { stopSignal: 'SIGTERM', log: options.log });
  const address = `127.0.0.1:${options.port}`;
  try {
    await waitUntilServing(address, server.child, server.output);
  } catch (error) {
    server.child.kill('SIGKILL');
    throw error;
  }
  return {
    address,
    uiUrl: options.uiPort ? `http://127.0.0.1:${options.uiPort}` : null,
    stop: server.stop,
  };
}

async function waitUntilServing(address: string, child: ChildProcess, output: () => string) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`the Temporal dev server exited (${child.exitCode}): ${output().trim().slice(-600)}`);
    }
    try {
      const connection = await Connection.connect({ address, connectTimeout: 1000 });
      try {
        await connection.workflowService.getSystemInfo({});
        return;
      } finally {
        await connection.close();
      }
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  throw new Error(`the Temporal dev server did not answer on ${address} within 60 s`);
}
