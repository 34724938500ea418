import type { ChildProcess } from 'node:child_process';
import { Connection } from '@temporalio/client';
import { startService } from '../../child-process.ts';
import { SEARCH_ATTRIBUTE_FLAGS } from '../../workflows/search-attributes.ts';
import { runInstallScript } from './install-script.ts';
import { freePort } from './ports.ts';
import { startReadOnlyUi } from './read-only-ui.ts';

/**
 * Finds or installs the Temporal CLI through scripts/temporal-cli.sh (one rule for dev, tests and CI).
 * What the script says (a build's progress, every 10 s) goes to `log` as it comes.
 */
export function findTemporalCli(log: (line: string) => void = () => {}): Promise<string> {
  return runInstallScript('temporal-cli.sh', [], log);
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
    // As deploy/compose/temporal/dynamicconfig.yaml: an activity scheduled on the worker's own queue
    // (an agent's start settling) comes back with the workflow task that scheduled it.
    '--dynamic-config-value',
    'system.enableActivityEagerExecution=true',
  ];
  if (options.dbFile) args.push('--db-filename', options.dbFile);
  // The UI listens on a port of its own, behind a front that only reads (read-only-ui.ts).
  const uiUpstream = options.uiPort ? await freePort() : undefined;
  if (uiUpstream) args.push('--ui-port', String(uiUpstream));
  else args.push('--headless');
  if (options.namespace && options.namespace !== 'default') args.push('--namespace', options.namespace);
  if (options.searchAttributes ?? true) {
    for (const flag of SEARCH_ATTRIBUTE_FLAGS) args.push('--search-attribute', flag);
  }

  const server = startService(options.cli, args, { stopSignal: 'SIGTERM', log: options.log });
  const address = `127.0.0.1:${options.port}`;
  try {
    await waitUntilServing({ address, what: 'the Temporal dev server', ...server });
  } catch (error) {
    server.child.kill('SIGKILL');
    throw error;
  }
  const ui = uiUpstream ? await startReadOnlyUi({ port: options.uiPort!, upstreamPort: uiUpstream }) : null;
  return {
    address,
    uiUrl: ui?.url ?? null,
    stop: async () => {
      await ui?.stop();
      await server.stop();
    },
  };
}

/** Waits until the Temporal at `address` answers, or fails saying why: `child` exited, or the time ran out. */
export async function waitUntilServing(options: {
  address: string;
  what: string;
  child: ChildProcess;
  output: () => string;
  timeoutMs?: number;
}) {
  const { address, what, child, output, timeoutMs = 60_000 } = options;
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`${what} exited (${child.exitCode}): ${output().trim().slice(-600)}`);
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
  throw new Error(`${what} did not answer on ${address} within ${timeoutMs / 1000} s`);
}
