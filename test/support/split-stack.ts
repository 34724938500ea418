// Services as a deployment outside `llmgw dev` finds them: a Temporal that is not ours (no llmgw search
// attributes), an empty database, and `llmgw serve` / `llmgw worker` run as separate processes.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { freePort } from '../../src/cli/dev/ports.ts';
import { findTemporalCli, startTemporalDevServer } from '../../src/cli/dev/temporal-server.ts';
import { newId } from '../../src/store/ids.ts';
import { sharedServices } from './services.ts';
import { createDatabase, eventually } from './stack.ts';
import { stackEnvironment } from './stack-environment.ts';

const ROOT = join(import.meta.dirname, '..', '..');

/** A Temporal dev server (in memory, no UI) started without llmgw's search attributes. */
export async function startForeignTemporal() {
  return startTemporalDevServer({
    cli: await findTemporalCli(),
    port: await freePort(),
    searchAttributes: false,
  });
}

/**
 * A new namespace whose Keyword search attributes are all taken (the dev server's SQL visibility has ten
 * of each type per namespace), so that the server refuses to register llmgw's.
 */
export async function crowdedNamespace(address: string, namespace: string): Promise<void> {
  await promisify(execFile)(await findTemporalCli(), [
    'operator',
    'namespace',
    'create',
    '--address',
    address,
    '--namespace',
    namespace,
  ]);
  const connection = await Connection.connect({ address });
  try {
    const fillers = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`Filler${i}`, 2 /* Keyword */]));
    // A new namespace is known to every service of the server a moment later.
    await eventually(
      `namespace ${namespace} filled`,
      async () => {
        await connection.operatorService.addSearchAttributes({ namespace, searchAttributes: fillers });
        return true;
      },
      30_000,
    );
  } finally {
    await connection.close();
  }
}

/** An empty database of its own in the tests' Postgres, as a deployment's external database: its URL. */
export async function emptyDatabase(): Promise<string> {
  return createDatabase((await sharedServices()).databaseUrl, `split_${newId()}`);
}

export interface LlmgwProcess {
  child: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Its exit code once it ends; 'running' if it has not within `ms`. */
  exitWithin(ms: number): Promise<number | null | 'running'>;
  /** SIGTERM, then its exit code. */
  stop(): Promise<number | null>;
}

/**
 * `node [nodeArgs] bin/llmgw.mjs <command>` configured only by `env`: nothing of the caller's
 * settings (its LLMGW_*, DATABASE_URL, TEMPORAL_*, PORT) reaches it. `root` is the checkout it runs
 * from (this one unless a bench compares another).
 */
export function runLlmgw(
  command: 'serve' | 'worker' | 'gateway',
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
  root = ROOT,
): LlmgwProcess {
  const child = spawn(process.execPath, [...nodeArgs, join(root, 'bin', 'llmgw.mjs'), command], {
    cwd: root,
    env: stackEnvironment(env),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    output: () => output,
    exitWithin: (ms) =>
      Promise.race([
        exited,
        new Promise<'running'>((resolve) => setTimeout(() => resolve('running'), ms).unref()),
      ]),
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
