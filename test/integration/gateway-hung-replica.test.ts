// A replica that hangs (its engine stopped with SIGSTOP: connections accepted, nothing answered) under
// 16 clients: no client waits much past the first-byte timeout, the replica is ejected with its reason,
// gets no request once ejected, and is taken back once it runs again (SIGCONT). The timeline is printed.
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { gpuNode, gpuProfile, ok } from '../support/cluster.ts';
import { closedPort } from '../support/ports.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

const FIRST_BYTE_TIMEOUT_MS = 1000;

/** `llmgw sim-engine` as a process of its own, so that it can be stopped with SIGSTOP. */
async function engineProcess(id: string): Promise<{ child: ChildProcess; url: string }> {
  const port = await closedPort();
  const child = spawn(
    process.execPath,
    [
      'bin/llmgw.mjs',
      'sim-engine',
      '--port',
      String(port),
      '--model',
      'chat',
      '--replica',
      id,
      '--max-batch',
      '64',
      '--base-tpot-ms',
      '5',
      '--tpot-growth-ms',
      '0',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await once(child.stdout!, 'data');
  return { child, url: `http://127.0.0.1:${port}` };
}

describe('the gateway when a replica hangs', () => {
  let stack: Stack;
  let key: string;
  const engines = new Map<string, { child: ChildProcess; url: string }>();

  before(async () => {
    stack = await startStack({
      gateway: true,
      nodes: [gpuNode('gpu-1', 8)],
      env: {
        LLMGW_GATEWAY_FIRST_BYTE_TIMEOUT_S: String(FIRST_BYTE_TIMEOUT_MS / 1000),
        LLMGW_GATEWAY_HEALTH_INTERVAL_S: '0.5',
        LLMGW_GATEWAY_HEALTH_TIMEOUT_S: '0.5',
        LLMGW_GATEWAY_HEALTH_UNHEALTHY: '2',
        LLMGW_GATEWAY_HEALTH_HEALTHY: '2',
      },
    });
    await ok(stack, 'PUT', '/api/v1/models/chat', {
      min_replicas: 0,
      max_replicas: 3,
      profiles: [gpuProfile('h100', 1, { default_concurrency: 64 })],
    });
    for (const id of ['hung-a', 'hung-b', 'hung-c']) {
      const engine = await engineProcess(id);
      engines.set(id, engine);
      await stack.sql`
        insert into replicas (id, model, profile, node, resources, state, created_at, endpoint)
        values (${id}, 'chat', 'h100', 'gpu-1', ${stack.sql.json({ gpus: 1, cores: 4, memory_gib: 32 })},
          'ready', now(), ${`${engine.url}/v1`})`;
    }
    key = await stack.token({ name: 'app', role: 'admin' });
    await eventually('the gateway to route to all three', async () => (await replicas()).length === 3);
  });
  after(async () => {
    for (const { child } of engines.values()) {
      child.kill('SIGCONT');
      child.kill('SIGTERM');
    }
    await stack?.stop();
  });

  const replicas = async () => {
    const answer = await fetch(`${stack.gatewayUrl}/replicas`, {
      headers: { authorization: `Bearer ${stack.metricsToken}` },
    });
    const { data } = (await answer.json()) as {
      data: { id: string; routable: boolean; ejected: { reason: string; detail: string } | null }[];
    };
    return data;
  };
  /** Requests the gateway sent to each replica so far. */
  const sent = async () => {
    const text = await (
      await fetch(`${stack.gatewayUrl}/metrics`, {
        headers: { authorization: `Bearer ${stack.metricsToken}` },
      })
    ).text();
    const counts: Record<string, number> = {};
    for (const [, id, value] of text.matchAll(
      /llmgw_gateway_replica_requests_total\{model="chat",replica="([^"]+)"\} (\d+)/g,
    )) {
      counts[id] = Number(value);
    }
    return counts;
  };

  it('sends no client past the first-byte timeout, ejects the hung replica with its reason, and takes it back', async () => {
    const started = performance.now();
    const t = () => `${((performance.now() - started) / 1000).toFixed(2)} s`;
    let running = true;
    const waits: number[] = [];
    const statuses: number[] = [];
    const client = async () => {
      while (running) {
        const sentAt = performance.now();
        const answer = await fetch(`${stack.gatewayUrl}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({
            model: 'chat',
            stream: true,
            max_tokens: 4,
            messages: [{ role: 'user', content: 'hi' }],
          }),
        });
        const reader = answer.body!.getReader();
        await reader.read();
        waits.push(performance.now() - sentAt);
        while (!(await reader.read()).done);
        statuses.push(answer.status);
      }
    };
    const clients = Array.from({ length: 16 }, client);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const hung = engines.get('hung-b')!;
    hung.child.kill('SIGSTOP');
    console.log(`${t()}: hung-b stopped (SIGSTOP); sent so far ${JSON.stringify(await sent())}`);
    const ejected = await eventually(
      'hung-b to be ejected',
      async () => (await replicas()).find((r) => r.id === 'hung-b' && r.ejected)?.ejected ?? undefined,
      10_000,
    );
    const atEjection = (await sent())['hung-b'];
    console.log(`${t()}: hung-b ejected (${ejected.reason}): ${ejected.detail}; it was sent ${atEjection}`);
    assert.match(ejected.reason, /^(health_check|first_byte_timeout)$/);
    for (let i = 0; i < 8; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      console.log(`${t()}: sent ${JSON.stringify(await sent())}`);
    }
    assert.equal((await sent())['hung-b'], atEjection, 'no request went to hung-b once it was ejected');

    hung.child.kill('SIGCONT');
    console.log(`${t()}: hung-b resumed (SIGCONT)`);
    await eventually(
      'hung-b to be routable again',
      async () => (await replicas()).find((r) => r.id === 'hung-b')?.routable,
      10_000,
    );
    console.log(`${t()}: hung-b routable again`);
    await eventually(
      'hung-b to get requests again',
      async () => (await sent())['hung-b'] > atEjection,
      10_000,
    );
    console.log(`${t()}: hung-b gets requests again: ${JSON.stringify(await sent())}`);
    running = false;
    await Promise.all(clients);

    const longest = Math.max(...waits);
    console.log(`${waits.length} requests; the longest wait for a first byte ${Math.round(longest)} ms`);
    assert.ok(
      statuses.every((s) => s === 200),
      `every request was answered: ${statuses.filter((s) => s !== 200)}`,
    );
    // A request sent to the hung replica waits the timeout, then is answered by another.
    assert.ok(longest < FIRST_BYTE_TIMEOUT_MS + 1500, `the longest wait was ${Math.round(longest)} ms`);
    const scrape = await (
      await fetch(`${stack.gatewayUrl}/metrics`, {
        headers: { authorization: `Bearer ${stack.metricsToken}` },
      })
    ).text();
    assert.match(
      scrape,
      /llmgw_gateway_replica_ejections_total\{model="chat",replica="hung-b",reason="[a-z_]+"\} 1/,
    );
  });
});
