// `llmgw gateway` as a process of its own, as it runs in production, in front of a stack's store: for the
// benchmarks that set it beside other routers (each router then has its own process, and the bench's
// process, with the API and the store's client, takes nothing from the gateway's event loop) and for the
// tests that run a gateway with settings of its own.
import { closedPort } from './ports.ts';
import { type LlmgwProcess, runLlmgw } from './split-stack.ts';
import { eventually, type Stack } from './stack.ts';

export interface LlmgwGateway extends LlmgwProcess {
  url: string;
}

/**
 * Starts `llmgw gateway` on a free port, reading the stack's store, with these settings (LLMGW_GATEWAY_*
 * and the like); resolves once it answers and its workers have read the routes.
 * To profile it: GATEWAY_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'.
 */
export async function startLlmgwGateway(
  stack: Stack,
  settings: Record<string, string> = {},
  /** Another checkout of llmgw to run the gateway of (a bench comparing two). */
  root?: string,
): Promise<LlmgwGateway> {
  const port = await closedPort();
  const gateway = runLlmgw(
    'gateway',
    {
      DATABASE_URL: stack.databaseUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      TEMPORAL_NAMESPACE: stack.config.temporalNamespace,
      LLMGW_TASK_QUEUE: stack.config.taskQueue,
      LLMGW_GATEWAY_PORT: String(port),
      LLMGW_GATEWAY_INSTANCE: 'bench',
      ...settings,
    },
    process.env.GATEWAY_NODE_ARGS?.split(' ').filter(Boolean),
    root,
  );
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    'llmgw gateway to answer',
    async () => {
      if (gateway.child.exitCode !== null) throw new Error(`it exited: ${gateway.output()}`);
      return (await fetch(`${url}/healthz`)).ok;
    },
    60_000,
  );
  // Every worker has read the routes (each at its start, and again when the store notifies a change).
  await new Promise((resolve) => setTimeout(resolve, 1500));
  return { ...gateway, url };
}
