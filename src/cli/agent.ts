import { parseArgs } from 'node:util';
import { startAgent } from '../agent/agent.ts';
import { chooseEngineUser } from '../agent/engine-user.ts';
import { parseCapacity } from '../agent/gpus.ts';
import { agentHome } from '../agent/supervisor.ts';
import { readSecretFile, secretFromEnv } from '../secret-file.ts';
import { apiUrlFromEnv, DEFAULT_API_URL } from './api-url.ts';

export const AGENT_USAGE = `usage: llmgw agent --node NAME [--token TOKEN] [--api URL] [--capacity gpus=8,cores=96,memory_gib=1024]
                   [--gpu-model MODEL] [--label k=v ...] [--engine-user USER | --engines-as-root]
                   [--secrets-dir DIR]

Runs this machine's engines for the control plane: registers node NAME through the API with the
capacity it detects (nvidia-smi, the OS, /proc/meminfo; --capacity and --gpu-model override), runs a
Temporal worker on the task queue llmgw-node:NAME, heartbeats, and reports its engines' load. Its token
is an agent token of NAME (llmgw ctl token create --role agent --node NAME --address ADDRESS
--max-capacity ...): its engines listen on that address, and it declares no more than those bounds.

As root it runs engines as USER (--engine-user, e.g. nobody), or as root only with --engines-as-root,
which it warns about; otherwise as its own user. A runtime's secret_env reads each secret from the file
of its name in --secrets-dir (LLMGW_AGENT_SECRETS_DIR; default LLMGW_AGENT_HOME/secrets).

environment: LLMGW_TOKEN or LLMGW_TOKEN_FILE (or --token-file PATH; --token TOKEN shows it to ps), LLMGW_URL (or --api; default ${DEFAULT_API_URL}),
  TEMPORAL_ADDRESS (default 127.0.0.1:7233), TEMPORAL_NAMESPACE, LLMGW_AGENT_HOME (its engines' state
  and logs; default ~/.llmgw-agent), LLMGW_AGENT_SECRETS_DIR, LLMGW_AGENT_HEARTBEAT_S (default 5).
SIGTERM stops the agent and none of its engines: a restarted agent adopts them.`;

/** The flags, or node's sentence for an unknown or valueless one. */
function parseFlags(args: string[]) {
  try {
    return parseArgs({
      args,
      options: {
        node: { type: 'string' },
        token: { type: 'string' },
        'token-file': { type: 'string' },
        api: { type: 'string' },
        capacity: { type: 'string' },
        'gpu-model': { type: 'string' },
        label: { type: 'string', multiple: true },
        'engine-user': { type: 'string' },
        'engines-as-root': { type: 'boolean' },
        'secrets-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (error) {
    throw new Error(`agent: ${(error as Error).message.split('. ')[0]}`);
  }
}

/** `--label zone=a`: the labels, each `k=v`. */
function labelsOf(pairs: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    pairs.map((pair) => {
      const at = pair.indexOf('=');
      if (at < 1) throw new Error(`--label takes k=v, not "${pair}"`);
      return [pair.slice(0, at), pair.slice(at + 1)];
    }),
  );
}

/** `llmgw agent`: runs until SIGTERM or SIGINT; resolves with a stop that leaves the engines serving. */
export async function runAgent(args: string[], env = process.env): Promise<(() => Promise<void>) | null> {
  const { values } = parseFlags(args);
  if (values.help) {
    console.info(AGENT_USAGE);
    return null;
  }
  if (!values.node) throw new Error(`agent needs --node\n\n${AGENT_USAGE}`);
  if (values.token !== undefined && values['token-file'] !== undefined)
    throw new Error('agent: give --token or --token-file, not both');
  const token =
    values['token-file'] !== undefined
      ? readSecretFile(values['token-file'], 'agent: --token-file')
      : (values.token ?? secretFromEnv(env, 'LLMGW_TOKEN'));
  if (!token) throw new Error('agent needs its agent token: --token-file, LLMGW_TOKEN_FILE or LLMGW_TOKEN');
  // The engines this agent starts inherit its environment: never its token, nor where it is kept.
  delete env.LLMGW_TOKEN;
  delete env.LLMGW_TOKEN_FILE;
  const heartbeatS = Number(env.LLMGW_AGENT_HEARTBEAT_S ?? 5);
  if (!(heartbeatS > 0))
    throw new Error(`LLMGW_AGENT_HEARTBEAT_S must be a number > 0, not "${env.LLMGW_AGENT_HEARTBEAT_S}"`);
  const capacity = values.capacity ? parseCapacity(values.capacity) : {};
  const labels = labelsOf(values.label ?? []);
  const engines = chooseEngineUser({
    user: values['engine-user'],
    asRoot: values['engines-as-root'] ?? false,
    uid: process.getuid?.() ?? -1,
  });
  if (engines.warning) console.warn(`agent: ${engines.warning}`);
  const agent = await startAgent({
    node: values.node,
    token,
    apiUrl: values.api ?? apiUrlFromEnv(env, console.warn),
    temporalAddress: env.TEMPORAL_ADDRESS || '127.0.0.1:7233',
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    capacity,
    ...(values['gpu-model'] && { gpuModel: values['gpu-model'] }),
    labels,
    home: agentHome(env),
    runAs: engines.user,
    secretsDir: values['secrets-dir'] ?? env.LLMGW_AGENT_SECRETS_DIR,
    heartbeatMs: heartbeatS * 1000,
  });
  console.info(`llmgw agent of node ${values.node} on task queue llmgw-node:${values.node}`);
  return agent.stop;
}
