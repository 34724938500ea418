// Real GuideLLM (the harness installs it: scripts/test-tools.sh) benchmarks a model through llmgw's
// gateway, with a client key, in front of the simulated engine as the model's ready replica; its
// benchmarks.json then goes through `llmgw ctl bench import --from guidellm`, figures intact.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type SimEngine, startSimEngine } from '../../src/cluster/sim/engine.ts';
import { ctl } from '../support/ctl.ts';
import { runGuidellm } from '../support/guidellm.ts';
import { type Stack, startStack } from '../support/stack.ts';

const MODEL = 'glm-chat';
const STREAMS = 4;
const REQUESTS = 20;
const OUTPUT_TOKENS = 16;

describe('GuideLLM against the gateway, imported by llmgw ctl bench import', () => {
  let stack: Stack;
  let engine: SimEngine;
  let key: string;
  const work = mkdtempSync(join(tmpdir(), 'llmgw-guidellm-'));

  before(async () => {
    stack = await startStack({ gateway: true });
    engine = await startSimEngine({
      maxBatch: 64,
      baseTpotMs: 2,
      tpotGrowthMs: 0.5,
      jitter: 0.1,
      seed: 7,
      model: MODEL,
    });
    await stack.call('POST', '/api/v1/orgs', { name: 'Acme' });
    const put = await stack.call('PUT', `/api/v1/models/${MODEL}`, {
      owner: 'org:Acme',
      max_replicas: 1,
      profiles: [{ name: 'sim', resources: { gpus: 1 } }],
    });
    assert.equal(put.status, 201, JSON.stringify(put.body));
    await stack.sql`insert into nodes (name, capacity, gpu_model, labels, state)
      values ('gpu-1', ${stack.sql.json({ gpus: 8, cores: 96, memory_gib: 1024 })}, 'H100', '{}', 'ready')`;
    await stack.sql`insert into replicas (id, model, profile, node, resources, state, endpoint)
      values ('glm-1', ${MODEL}, 'sim', 'gpu-1', ${stack.sql.json({ gpus: 1 })}, 'ready', ${`${engine.url}/v1`})`;
    key = await stack.token({ name: 'bench', role: 'client', scope: 'org:Acme' });
  });
  after(async () => {
    await engine.stop();
    await stack.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('runs every request through the gateway with a client key, and its report imports as the measurement', async () => {
    const report = await runGuidellm({
      target: `${stack.gatewayUrl}/v1`,
      model: MODEL,
      apiKey: key,
      outputDir: work,
      concurrency: STREAMS,
      requests: REQUESTS,
      outputTokens: OUTPUT_TOKENS,
    });
    const scrape = await (
      await fetch(`${stack.gatewayUrl}/metrics`, {
        headers: { authorization: `Bearer ${stack.metricsToken}` },
      })
    ).text();
    const answered = /llmgw_gateway_requests_total\{model="glm-chat",status="200"\} (\d+)/.exec(scrape);
    assert.equal(Number(answered?.[1]), REQUESTS, 'every request went through the gateway, with the key');
    assert.doesNotMatch(scrape, /^llmgw_gateway_errors_total\{/m, 'none was refused');

    const text = readFileSync(report, 'utf8');
    assert.ok(!text.includes(key), 'the report keeps no key');
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
