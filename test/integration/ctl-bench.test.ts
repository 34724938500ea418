import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { type SimEngine, simKnee, startSimEngine } from '../../src/cluster/sim/engine.ts';
import { ctl } from '../support/ctl.ts';
import { type Stack, startStack } from '../support/stack.ts';

const FIXTURES = join(import.meta.dirname, '../fixtures/bench');
const SMALL = ['--prompt-tokens', '64', '--max-tokens', '16'];

describe('llmgw ctl bench and measurements', () => {
  let stack: Stack;
  let engine: SimEngine;
  const model = { maxBatch: 64, baseTpotMs: 2, tpotGrowthMs: 2, jitter: 0.1, seed: 11 };
  /** `llmgw ctl bench` of a profile of the model ctlb-chat. */
  const benchOf = (profile: string, ...argv: string[]) =>
    ctl(stack, 'bench', '--model', 'ctlb-chat', '--profile', profile, ...argv);
  const stored = async (profile: string) =>
    (await stack.call('GET', '/api/v1/measurements?model=ctlb-chat')).body.find(
      (m: { profile: string }) => m.profile === profile,
    );
  before(async () => {
    stack = await startStack();
    engine = await startSimEngine(model);
    const put = await stack.call('PUT', '/api/v1/models/ctlb-chat', {
      max_replicas: 2,
      profiles: ['sim', 'l4', 'h100', 'old'].map((name) => ({ name, resources: { gpus: 1 } })),
    });
    assert.equal(put.status, 201, JSON.stringify(put.body));
  });
  after(async () => {
    await engine.stop();
    await stack.stop();
  });

  it('finds the knee of an engine, shows its levels and stores the measurement', async () => {
    // TPOT(c) = 2 + 2 (c - 1) ms: 12 at 6, 14 at 7; a busy machine only makes tokens late, so the bound sits near 14.
    // The TTFT bound is far off: on a busy machine a first token can wait half a second, and TPOT is the knee here.
    const slo = { ttft_p95_ms: 10_000, tpot_p95_ms: 13.5 };
    const bench = await benchOf(
      'sim',
      '--url',
      `${engine.url}/v1`,
      '--slo-ttft-p95-ms',
      '10000',
      '--slo-tpot-p95-ms',
      '13.5',
      ...SMALL,
      '--store',
    );
    assert.equal(bench.code, 0, bench.stderr);
    assert.match(
      bench.stderr,
      /^bench: concurrency 1: TTFT p95 [\d.]+ ms, TPOT p95 [\d.]+ ms, \d+ tokens\/s, 8 requests -> meets the SLO$/m,
    );
    assert.match(bench.stderr, /-> misses \(TPOT p95 [\d.]+ ms > 13.5 ms\)$/m);
    assert.match(
      bench.stdout,
      /^CONCURRENCY\s+REQUESTS\s+FAILED\s+TTFT_P95_MS\s+TPOT_P95_MS\s+E2E_P95_MS\s+TOKENS_PER_SEC\s+SLO\n1\s+8\s+0\s/,
    );
    const answer =
      /^max concurrency at SLO \(TTFT p95 <= 10000 ms, TPOT p95 <= 13.5 ms\): (\d+), at \d+ tokens\/s$/m.exec(
        bench.stdout,
      );
    assert.ok(answer, bench.stdout);
    const found = Number(answer[1]);
    const known = simKnee(model, slo, 64);
    assert.ok(Math.abs(found - known) <= 1, `found ${found}, true ${known}`);
    assert.match(bench.stdout, /stored as the measurement of ctlb-chat\/sim\n$/);

    const measurement = await stored('sim');
    assert.equal(measurement.max_concurrency_at_slo, found);
    assert.equal(measurement.tool, 'llmgw-bench');
    assert.deepEqual(measurement.slo, slo);
    assert.ok(measurement.points.length >= 5);
    assert.ok(measurement.throughput_tok_per_sec > 0);

    const list = await ctl(stack, 'measurements', '--model', 'ctlb-chat');
    assert.equal(list.code, 0, list.stderr);
    assert.match(
      list.stdout,
      new RegExp(
        `^ctlb-chat\\s+sim\\s+${found}\\s+[\\d.]+\\s+TTFT p95 <= 10000 ms, TPOT p95 <= 13.5 ms\\s+llmgw-bench\\s+\\S+$`,
        'm',
      ),
    );
  });

  it('says 0, not a crash, for an engine that never meets the SLO, and stores nothing without --store', async () => {
    const slow = await startSimEngine({ maxBatch: 8, baseTpotMs: 8, tpotGrowthMs: 1, jitter: 0, seed: 1 });
    try {
      const bench = await benchOf(
        'l4',
        '--url',
        `${slow.url}/v1`,
        '--slo-tpot-p95-ms',
        '4',
        ...SMALL,
        '-o',
        'json',
      );
      assert.equal(bench.code, 0, bench.stderr);
      const result = JSON.parse(bench.stdout);
      assert.equal(result.max_concurrency_at_slo, 0);
      assert.equal(result.throughput_tok_per_sec, 0);
      assert.equal(result.stored, false);
      assert.deepEqual(
        result.levels.map((l: { concurrency: number }) => l.concurrency),
        [1],
      );
      assert.equal(await stored('l4'), undefined);
      // Asked to store it, it stores nothing (a capacity of 0 is no measurement), says so and exits 1.
      const storing = await benchOf(
        'l4',
        '--url',
        `${slow.url}/v1`,
        '--slo-tpot-p95-ms',
        '4',
        ...SMALL,
        '--store',
      );
      assert.equal(storing.code, 1);
      assert.match(storing.stdout, /^no concurrency meets the SLO \(TPOT p95 <= 4 ms\): 0$/m);
      assert.doesNotMatch(storing.stdout, /stored as/);
      assert.equal(
        storing.stderr
          .split('\n')
          .filter((line) => !line.startsWith('bench: '))
          .join('\n'),
        'no level met the SLO, so nothing was stored as the measurement of ctlb-chat/l4\n',
      );
      assert.equal(await stored('l4'), undefined);
    } finally {
      await slow.stop();
    }
    const table = await benchOf('l4', '--url', `${engine.url}/v1`, '--slo-tpot-p95-ms', '1', ...SMALL);
    assert.match(table.stdout, /^no concurrency meets the SLO \(TPOT p95 <= 1 ms\): 0$/m);
  });

  it('exits 1 when the endpoint does not answer, 2 on a wrong command line', async () => {
    const gone = await startSimEngine({ maxBatch: 1, baseTpotMs: 1, tpotGrowthMs: 0, jitter: 0, seed: 1 });
    await gone.stop();
    const unreachable = await benchOf('sim', '--url', `${gone.url}/v1`, '--slo-tpot-p95-ms', '10');
    assert.equal(unreachable.code, 1);
    assert.match(
      unreachable.stderr,
      new RegExp(`^bench: ${gone.url}/v1 did not answer a first request: .*ECONNREFUSED`, 'm'),
    );
    const noUrl = await benchOf('sim', '--slo-tpot-p95-ms', '10');
    assert.equal(noUrl.code, 2);
    assert.match(noUrl.stderr, /bench needs --url/);
    const noSlo = await benchOf('sim', '--url', `${engine.url}/v1`);
    assert.equal(noSlo.code, 2);
    assert.match(noSlo.stderr, /give --slo-ttft-p95-ms, --slo-tpot-p95-ms or both/);
    const zero = await benchOf(
      'sim',
      '--url',
      'http://x/v1',
      '--slo-tpot-p95-ms',
      '10',
      '--max-concurrency',
      '0',
    );
    assert.equal(zero.code, 2);
    assert.match(zero.stderr, /--max-concurrency must be at least 1/);
  });

  it('refuses a capacity of 0 in the API and in bench import, and keeps the measurement stored', async () => {
    const measurement = {
      model: 'ctlb-chat',
      profile: 'h100',
      max_concurrency_at_slo: 8,
      throughput_tok_per_sec: 120,
      slo: { tpot_p95_ms: 50 },
    };
    assert.equal((await stack.call('PUT', '/api/v1/measurements', measurement)).status, 200);
    const kept = await stored('h100');
    const zero = await stack.call('PUT', '/api/v1/measurements', {
      ...measurement,
      max_concurrency_at_slo: 0,
      throughput_tok_per_sec: 0,
    });
    assert.deepEqual(zero, {
      status: 400,
      body: {
        error:
          'max_concurrency_at_slo must be above 0: 0 says no concurrency met the SLO, which is no measurement to store',
      },
    });
    const imported = await ctl(
      stack,
      'bench',
      'import',
      '--from',
      'vllm',
      join(FIXTURES, 'vllm-serve-p95.jsonl'),
      '--model',
      'ctlb-chat',
      '--profile',
      'h100',
      '--slo-tpot-p95-ms',
      '0.001',
    );
    assert.equal(imported.code, 1);
    assert.match(imported.stdout, /^no concurrency meets the SLO \(TPOT p95 <= 0.001 ms\): 0$/m);
    assert.equal(
      imported.stderr,
      'no level met the SLO, so nothing was stored as the measurement of ctlb-chat/h100\n',
    );
    assert.deepEqual(await stored('h100'), kept);
  });

  it('imports vllm bench serve results: the stored measurement round-trips the file', async () => {
    const imported = await ctl(
      stack,
      'bench',
      'import',
      '--from',
      'vllm',
      join(FIXTURES, 'vllm-serve-p95.jsonl'),
      '--model',
      'ctlb-chat',
      '--profile',
      'l4',
      '--slo-ttft-p95-ms',
      '500',
      '--slo-tpot-p95-ms',
      '50',
    );
    assert.equal(imported.code, 0, imported.stderr);
    assert.match(
      imported.stdout,
      /^max concurrency at SLO \(TTFT p95 <= 500 ms, TPOT p95 <= 50 ms\): 16, at 331 tokens\/s$/m,
    );
    const measurement = await stored('l4');
    assert.equal(measurement.max_concurrency_at_slo, 16);
    assert.equal(measurement.throughput_tok_per_sec, 331);
    assert.equal(measurement.tool, 'vllm bench serve');
    assert.deepEqual(measurement.points[4], {
      concurrency: 16,
      ttft_p95_ms: 418.3,
      tpot_p95_ms: 47.6,
      tok_per_sec: 331,
    });
    assert.equal(measurement.points.length, 6);
  });

  it('imports p99-only vllm results with a warning, and GuideLLM reports of both layouts', async () => {
    const p99 = await ctl(
      stack,
      'bench',
      'import',
      '--from',
      'vllm',
      join(FIXTURES, 'vllm-serve-p99.json'),
      '--model',
      'ctlb-chat',
      '--profile',
      'l4',
      '--slo-tpot-p95-ms',
      '50',
    );
    assert.equal(p99.code, 0, p99.stderr);
    assert.match(
      p99.stderr,
      /^bench import: .*vllm-serve-p99.json has no p95 of TTFT and TPOT; used its p99/m,
    );
    assert.equal((await stored('l4')).max_concurrency_at_slo, 4);

    const guidellm = await ctl(
      stack,
      'bench',
      'import',
      '--from',
      'guidellm',
      join(FIXTURES, 'guidellm-benchmarks.json'),
      '--model',
      'ctlb-chat',
      '--profile',
      'h100',
      '--slo-ttft-p95-ms',
      '500',
      '--slo-tpot-p95-ms',
      '30',
      '-o',
      'json',
    );
    assert.equal(guidellm.code, 0, guidellm.stderr);
    const result = JSON.parse(guidellm.stdout);
    assert.equal(result.stored, true);
    const measurement = await stored('h100');
    assert.equal(measurement.max_concurrency_at_slo, 16);
    assert.equal(measurement.throughput_tok_per_sec, 655.9);
    assert.equal(measurement.tool, 'guidellm');
    assert.deepEqual(measurement.points, result.points);

    const old = await ctl(
      stack,
      'bench',
      'import',
      '--from',
      'guidellm',
      join(FIXTURES, 'guidellm-0.2-benchmarks.json'),
      '--model',
      'ctlb-chat',
      '--profile',
      'old',
      '--slo-ttft-p95-ms',
      '200',
      '--slo-tpot-p95-ms',
      '20',
    );
    assert.equal(old.code, 0, old.stderr);
    assert.equal((await stored('old')).max_concurrency_at_slo, 6);
  });

  it('prints the result even when the server refuses to store it, then exits 1 with its sentence', async () => {
    const refused = await ctl(
      stack,
      'bench',
      'import',
      '--from',
      'vllm',
      join(FIXTURES, 'vllm-serve-p95.jsonl'),
      '--model',
      'ctlb-chat',
      '--profile',
      'a100',
      '--slo-tpot-p95-ms',
      '50',
    );
    assert.equal(refused.code, 1);
    assert.equal(refused.stderr, 'model ctlb-chat has no profile "a100"\n');
    assert.match(refused.stdout, /^max concurrency at SLO \(TPOT p95 <= 50 ms\): 16, at 331 tokens\/s$/m);
    const file = await ctl(
      stack,
      'bench',
      'import',
      '--from',
      'vllm',
      join(FIXTURES, 'guidellm-benchmarks.json'),
      '--model',
      'ctlb-chat',
      '--profile',
      'l4',
      '--slo-tpot-p95-ms',
      '50',
    );
    assert.equal(file.code, 1);
    assert.match(file.stderr, /guidellm-benchmarks.json: result 1: completed:/);
    const tool = await ctl(
      stack,
      'bench',
      'import',
      '--from',
      'locust',
      'x.json',
      '--model',
      'ctlb-chat',
      '--profile',
      'l4',
      '--slo-tpot-p95-ms',
      '50',
    );
    assert.equal(tool.code, 2);
    assert.match(tool.stderr, /--from locust: the tool is one of vllm, guidellm/);
  });
});
