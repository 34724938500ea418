// `llmgw gateway` as a process of its own, as it runs in production, for the benchmarks that set it
// beside other routers: each router then has its own process, and the bench's process (the API, the
// store's client) takes nothing from the gateway's event loop.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closedPort } from '../../test/support/ports.ts';
import type { startStack } from '../../test/support/stack.ts';

export interface LlmgwGateway {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts `llmgw gateway` on a free port, reading the stack's store, with these settings (LLMGW_GATEWAY_*
 * and the like); resolves once it answers and its workers have read the routes.
 * To profile it: GATEWAY_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'.
 */
export async function startLlmgwGateway(
  stack: Awaited<ReturnType<typeof startStack>>,
  settings: Record<string, string> = {},
): Promise<LlmgwGateway> {
  const port = await closedPort();
  const nodeArgs = process.env.GATEWAY_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
  const child = spawn(process.execPath, [...nodeArgs, 'bin/llmgw.mjs', 'gateway'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      DATABASE_URL: stack.databaseUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      LLMGW_TASK_QUEUE: stack.config.taskQueue,
      LLMGW_GATEWAY_PORT: String(port),
      LLMGW_GATEWAY_INSTANCE: 'bench',
      ...settings,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {}
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('llmgw gateway did not start');
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  // Every worker has read the routes (each at its start, and again when the store notifies a change).
  await new Promise((resolve) => setTimeout(resolve, 1500));
  return {
    url,
    child,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
