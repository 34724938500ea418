// Real GuideLLM (the harness installs it: scripts/test-tools.sh) benchmarks the simulated engine behind a
// proxy that, like the gateway, wants a bearer key; its benchmarks.json then goes through
// `llmgw ctl bench import --from guidellm` into a real stack, figures intact.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type SimEngine, startSimEngine } from '../../src/cluster/sim/engine.ts';
import { ctl } from '../support/ctl.ts';
import { runGuidellm } from '../support/guidellm.ts';
import { type Stack, startStack } from '../support/stack.ts';

const MODEL = 'glm-chat';
const API_KEY = 'sk-guidellm-test';
const STREAMS = 4;
const REQUESTS = 20;
const OUTPUT_TOKENS = 16;

/** A proxy to `upstream` that answers 401 to any request without `Authorization: Bearer API_KEY`. */
async function keyCheckingProxy(upstream: string) {
  const seen = { authorized: new Map<string, number>(), refused: 0 };
  const server: Server = createServer((req, res) => {
    if (req.headers.authorization !== `Bearer ${API_KEY}`) {
      seen.refused++;
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ error: { message: 'no valid key', type: 'invalid_request_error', code: 401 } }),
      );
      return;
    }
    const route = `${req.method} ${req.url}`;
    seen.authorized.set(route, (seen.authorized.get(route) ?? 0) + 1);
    const forward = request(
      `${upstream}${req.url}`,
      { method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    stop: () => {
      server.closeAllConnections();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('GuideLLM against an OpenAI-compatible server, imported by llmgw ctl bench import', () => {
  let stack: Stack;
  let engine: SimEngine;
  let proxy: Awaited<ReturnType<typeof keyCheckingProxy>>;
  const work = mkdtempSync(join(tmpdir(), 'llmgw-guidellm-'));

  before(async () => {
    stack = await startStack();
    engine = await startSimEngine({
      maxBatch: 64,
      baseTpotMs: 2,
      tpotGrowthMs: 0.5,
      jitter: 0.1,
      seed: 7,
      model: MODEL,
    });
    proxy = await keyCheckingProxy(engine.url);
    const put = await stack.call('PUT', `/api/v1/models/${MODEL}`, {
      max_replicas: 1,
      profiles: [{ name: 'sim', resources: { gpus: 1 } }],
    });
    assert.equal(put.status, 201, JSON.stringify(put.body));
  });
  after(async () => {
    await proxy.stop();
    await engine.stop();
    await stack.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('runs every request with the key, and its report imports as the measurement with its figures', async () => {
    const report = await runGuidellm({
      target: `${proxy.url}/v1`,
      model: MODEL,
      apiKey: API_KEY,
      outputDir: work,
      concurrency: STREAMS,
      requests: REQUESTS,
      outputTokens: OUTPUT_TOKENS,
    });
    assert.equal(proxy.seen.refused, 0, 'every request carried the bearer key');
    assert.equal(proxy.seen.authorized.get('POST /v1/chat/completions'), REQUESTS);
    assert.ok(
      (proxy.seen.authorized.get('GET /v1/models') ?? 0) >= 1,
      'GuideLLM checked the server with the key',
    );

    const text = readFileSync(report, 'utf8');
    assert.ok(!text.includes(API_KEY), 'the report keeps no key');
    const [benchmark] = JSON.parse(text).benchmarks;
    const { metrics } = benchmark;
    assert.equal(benchmark.config.strategy.type_, 'concurrent');
    assert.deepEqual(metrics.request_totals, {
      successful: REQUESTS,
      errored: 0,
      incomplete: 0,
      total: REQUESTS,
    });
    // The engine gives each request exactly the tokens asked; GuideLLM counted them all.
    assert.equal(metrics.output_token_count.successful.total_sum, REQUESTS * OUTPUT_TOKENS);
    const ttftP95 = metrics.time_to_first_token_ms.successful.percentiles.p95;
    const itlP95 = metrics.inter_token_latency_ms.successful.percentiles.p95;
    const tokPerSec = metrics.output_tokens_per_second.successful.mean;
    assert.ok(ttftP95 > 0 && itlP95 > 0 && tokPerSec > 0, JSON.stringify({ ttftP95, itlP95, tokPerSec }));

    const imported = await ctl(
      stack,
      'bench',
      'import',
      '--from',
      'guidellm',
      report,
      '--model',
      MODEL,
      '--profile',
      'sim',
      '--slo-ttft-p95-ms',
      '10000',
      '--slo-tpot-p95-ms',
      '1000',
      '-o',
      'json',
    );
    assert.equal(imported.code, 0, imported.stderr);
    const result = JSON.parse(imported.stdout);
    assert.equal(result.stored, true);
    assert.equal(result.levels.length, 1);
    const [level] = result.levels;
    assert.equal(level.concurrency, STREAMS);
    assert.equal(level.requests, REQUESTS);
    assert.equal(level.failed, 0);
    assert.equal(level.ttft_p95_ms, ttftP95);
    assert.equal(level.tpot_p95_ms, itlP95);
    assert.equal(level.tok_per_sec, tokPerSec);
    assert.ok(level.ttft_p95_ms < level.e2e_p95_ms, 'the first token comes before the last');

    const round = (value: number) => Math.round(value * 1000) / 1000;
    const measurement = (await stack.call('GET', `/api/v1/measurements?model=${MODEL}`)).body.find(
      (m: { profile: string }) => m.profile === 'sim',
    );
    assert.equal(measurement.tool, 'guidellm');
    assert.equal(measurement.max_concurrency_at_slo, STREAMS);
    assert.equal(measurement.throughput_tok_per_sec, round(tokPerSec));
    assert.deepEqual(measurement.points, [
      {
        concurrency: STREAMS,
        ttft_p95_ms: round(ttftP95),
        tpot_p95_ms: round(itlP95),
        tok_per_sec: round(tokPerSec),
      },
    ]);
  });
});
