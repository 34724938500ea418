import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { createMetrics } from '../../../src/metrics/registry.ts';
import { serveMetrics } from '../../../src/metrics/server.ts';

describe("a lone worker's metrics server", () => {
  it('serves the registry at GET /metrics in the Prometheus text format, and nothing else', async () => {
    const metrics = createMetrics();
    metrics.decisions.inc({ model: 'chat', action: 'place' });
    const server = await serveMetrics(metrics.registry, '127.0.0.1', 0);
    try {
      const answer = await fetch(server.url);
      assert.equal(answer.status, 200);
      assert.match(answer.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
      assert.match(
        await answer.text(),
        /^llmgw_reconcile_decisions_total\{model="chat",action="place"\} 1$/m,
      );
      assert.equal((await fetch(server.url.replace('/metrics', '/'))).status, 404);
    } finally {
      await server.close();
    }
  });

  it('says which setting to change when its port is taken', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      await assert.rejects(serveMetrics(createMetrics().registry, '127.0.0.1', port), /LLMGW_METRICS_PORT/);
    } finally {
      taken.close();
    }
  });
});
