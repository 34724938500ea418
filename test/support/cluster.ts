import assert from 'node:assert/strict';
import { ENDED_STATES, type ReplicaState } from '../../src/domain/cluster.ts';
import { eventually, type Stack } from './stack.ts';

/** Fast clocks so a scale-down window, a drain and a resync take a second or two. */
export const FAST = {
  LLMGW_RESYNC_S: '1',
  LLMGW_SCALE_DOWN_WINDOW_S: '2',
  LLMGW_SIM_START_DELAY_MS: '150',
  LLMGW_DRAIN_GRACE_S: '0.2',
  LLMGW_LOAD_STALE_S: '60',
};

export const gpuNode = (name: string, gpus: number, gpu_model = 'H100') => ({
  name,
  capacity: { gpus, cores: gpus * 12, memory_gib: gpus * 128 },
  gpu_model,
  labels: {},
});
export const cpuNode = (name: string, cores: number) => ({
  name,
  capacity: { cores, memory_gib: cores * 4 },
  gpu_model: null,
  labels: {},
});

export async function ok<T = any>(stack: Stack, method: string, path: string, body?: unknown): Promise<T> {
  const answer = await stack.call(method, path, body);
  assert.ok(
    answer.status >= 200 && answer.status < 300,
    `${method} ${path} -> ${answer.status} ${JSON.stringify(answer.body)}`,
  );
  return answer.body as T;
}

/** Active replicas of a model (they hold room), by state. */
export async function activeReplicas(stack: Stack, model: string) {
  const all = await ok<{ id: string; state: ReplicaState; node: string; profile: string }[]>(
    stack,
    'GET',
    `/api/v1/replicas?model=${model}`,
  );
  return all.filter((r) => !ENDED_STATES.includes(r.state));
}

/** Waits until the model has exactly `n` ready replicas and nothing else holding room. */
export function settledAt(stack: Stack, model: string, n: number, timeoutMs = 20_000) {
  return eventually(
    `${model} at ${n} ready replicas`,
    async () => {
      const active = await activeReplicas(stack, model);
      return active.length === n && active.every((r) => r.state === 'ready') ? active : undefined;
    },
    timeoutMs,
  );
}

export async function decisions(stack: Stack, model: string) {
  return ok<{ action: string; reason: string; inputs: Record<string, unknown> }[]>(
    stack,
    'GET',
    `/api/v1/models/${model}/decisions?limit=200`,
  );
}

/** Waits for a decision of the model whose reason matches; on timeout, says what the newest ones said. */
export async function decisionSaying(stack: Stack, model: string, pattern: RegExp, timeoutMs = 20_000) {
  try {
    return await eventually(
      `a decision of ${model} matching ${pattern}`,
      async () => (await decisions(stack, model)).find((d) => pattern.test(d.reason)),
      timeoutMs,
    );
  } catch (error) {
    // A store that cannot be read says nothing more: the timeout is still what failed.
    const newest = await decisions(stack, model)
      .then((all) => all.slice(0, 3).map((d) => `${d.action}: ${d.reason}`))
      .catch(() => []);
    throw new Error(`${(error as Error).message}; the newest decisions: ${newest.join(' | ') || 'none'}`);
  }
}

export const gpuProfile = (name: string, gpus: number, extra: Record<string, unknown> = {}) => ({
  name,
  priority: 10,
  resources: { gpus, cores: gpus * 4, memory_gib: gpus * 32 },
  gpu_model: 'H100',
  ...extra,
});

/**
 * Waits until the gateway routes `model` to `count` ready replicas: replicas written to the store reach
 * its routing table on the store's notification, which a busy machine can delay past a test's first
 * request (which then finds none ready: a 503).
 */
export async function untilRouted(stack: Stack, key: string, model: string, count: number) {
  await eventually(`the gateway to route ${model} to its ${count} replicas`, async () => {
    const listed = await fetch(`${stack.gatewayUrl}/v1/models`, {
      headers: { authorization: `Bearer ${key}` },
    });
    const { data } = (await listed.json()) as { data: { id: string; ready_replicas: number }[] };
    return data.find((m) => m.id === model)?.ready_replicas === count;
  });
}
