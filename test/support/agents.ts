import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Stack } from './stack.ts';
import { stackEnvironment } from './stack-environment.ts';

const ROOT = join(import.meta.dirname, '..', '..');

export interface AgentProcess {
  child: ChildProcess;
  /** What it wrote (stdout and stderr), for failures. */
  output: string[];
}

/**
 * What an admin gives an agent token of `node` (POST /api/v1/tokens): its address (loopback here) and
 * bounds no lower than what spawnAgent, the API tests and bench agent-start declare (H100, name=node).
 */
export const agentGrant = (node: string, address = '127.0.0.1') => ({
  name: `agent-${node}`,
  role: 'agent',
  node,
  node_address: address,
  node_bounds: {
    capacity: { gpus: 8, cores: 96, memory_gib: 1024 },
    gpu_model: 'H100',
    labels: { name: node },
  },
});

/** `llmgw agent --node NODE` as a process of its own, under `stack`, its home `home`, heartbeating every second. */
export function spawnAgent(
  stack: Stack,
  node: string,
  token: string,
  home: string,
  capacity = 'gpus=2,cores=24,memory_gib=256',
  /**
   * Whom its engines run as: as root, root by default (the GuideLLM these tests run lives under /root,
   * which no other user may enter); `['--engine-user', 'nobody']` where a test needs them unprivileged.
   */
  engineUser: string[] = process.getuid?.() === 0 ? ['--engines-as-root'] : [],
): AgentProcess {
  const args = [
    'agent',
    '--node',
    node,
    '--capacity',
    capacity,
    '--gpu-model',
    'H100',
    '--label',
    `name=${node}`,
    ...engineUser,
  ];
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'llmgw.mjs'), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: stackEnvironment({
      LLMGW_TOKEN: token,
      LLMGW_URL: stack.url,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      LLMGW_AGENT_HOME: home,
      LLMGW_AGENT_HEARTBEAT_S: '1',
    }),
  });
  const output: string[] = [];
  for (const stream of [child.stdout!, child.stderr!])
    stream.on('data', (chunk) => output.push(String(chunk)));
  return { child, output };
}

/** The engines an agent's home lists (engines.json); none before it wrote one. */
export function engineRecords(
  home: string,
): { replica: string; pid: number; port: number; url: string; started_at: string }[] {
  try {
    return JSON.parse(readFileSync(join(home, 'engines.json'), 'utf8')).engines ?? [];
  } catch {
    return [];
  }
}

/** Ends every engine an agent's home lists: they outlive their agents on purpose. */
export function killEngines(home: string) {
  for (const record of engineRecords(home)) {
    try {
      process.kill(-record.pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}
