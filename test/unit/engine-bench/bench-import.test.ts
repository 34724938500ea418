import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { importResults } from '../../../src/engine-bench/import.ts';
import { parseJsonRecords } from '../../../src/engine-bench/json-records.ts';
import { measurementOf } from '../../../src/engine-bench/measurement.ts';

const fixture = (name: string) =>
  readFileSync(join(import.meta.dirname, '../../fixtures/bench', name), 'utf8');
/** A file as a tool wrote it, kept compressed: GuideLLM's reports are large. */
const gzippedFixture = (name: string) =>
  gunzipSync(readFileSync(join(import.meta.dirname, '../../fixtures/bench', name))).toString('utf8');
const target = { model: 'llama-8b', profile: 'l4', tool: 'x' };

describe('result files', () => {
  it('hold one object, an array of them, or JSON lines', () => {
    assert.deepEqual(parseJsonRecords('{"a":1}', 'f'), [{ a: 1 }]);
    assert.deepEqual(parseJsonRecords('[{"a":1},{"a":2}]', 'f'), [{ a: 1 }, { a: 2 }]);
    assert.deepEqual(parseJsonRecords('{"a":1}\n\n{"a":2}\n', 'f'), [{ a: 1 }, { a: 2 }]);
    assert.throws(() => parseJsonRecords('{"a":1}\n{"a":', 'f'), /f is neither JSON nor JSON lines: line 2/);
    assert.throws(() => parseJsonRecords('  ', 'f'), /f is empty/);
    assert.throws(() => parseJsonRecords('nope', 'f'), /f is not JSON/);
  });
});

describe('vllm bench serve results', () => {
  it('give one level per --max-concurrency run, with their p95s and output throughput', () => {
    const imported = importResults('vllm', fixture('vllm-serve-p95.jsonl'), 'vllm-serve-p95.jsonl');
    assert.equal(imported.tool, 'vllm bench serve');
    assert.deepEqual(imported.warnings, []);
    assert.deepEqual(
      imported.levels.map((l) => [l.concurrency, l.ttft_p95_ms, l.tpot_p95_ms, l.tok_per_sec, l.failed]),
      [
        [1, 82.4, 17.9, 55.1, 0],
        [2, 104.7, 20.6, 96.3, 0],
        [4, 158.2, 25.8, 152.9, 0],
        [8, 236.9, 34.7, 228.4, 0],
        [16, 418.3, 47.6, 331.0, 0],
        [32, 905.6, 70.8, 442.7, 0],
      ],
    );
    const measurement = measurementOf(target, { ttft_p95_ms: 500, tpot_p95_ms: 50 }, imported.levels);
    assert.equal(measurement.max_concurrency_at_slo, 16);
    assert.equal(measurement.throughput_tok_per_sec, 331);
    assert.equal(measurement.points.length, 6);
  });

  it('use the stricter p99 when the run reported no p95, say so, and count failed requests as a miss', () => {
    const imported = importResults('vllm', fixture('vllm-serve-p99.json'), 'p99.json');
    assert.match(imported.warnings.join(), /p99.json has no p95 of TTFT and TPOT; used its p99/);
    assert.deepEqual(
      imported.levels.map((l) => [l.concurrency, l.ttft_p95_ms, l.failed, l.requests]),
      [
        [2, 120.5, 0, 16],
        [4, 171.0, 0, 32],
        [8, 260.4, 3, 64],
      ],
    );
    const measurement = measurementOf(target, { ttft_p95_ms: 500, tpot_p95_ms: 50 }, imported.levels);
    assert.equal(measurement.max_concurrency_at_slo, 4, 'the run at 8 had failures');
  });

  it('refuse a run without --max-concurrency or without the percentiles, naming the result and the fix', () => {
    const run = { completed: 10, failed: 0, output_throughput: 100, p95_ttft_ms: 1, p95_tpot_ms: 1 };
    assert.throws(
      () => importResults('vllm', JSON.stringify({ ...run, max_concurrency: null }), 'r.json'),
      /r.json: result 1 has no max_concurrency; run vllm bench serve with --max-concurrency N/,
    );
    assert.throws(
      () =>
        importResults(
          'vllm',
          JSON.stringify({ ...run, max_concurrency: 4, p95_tpot_ms: undefined }),
          'r.json',
        ),
      /has no p95_tpot_ms; run vllm bench serve with --percentile-metrics ttft,tpot --metric-percentiles 95/,
    );
    assert.throws(
      () => importResults('vllm', '{"max_concurrency": 4}', 'r.json'),
      /r.json: result 1: completed:/,
    );
  });
});

describe('GuideLLM benchmarks.json', () => {
  it('gives one level per concurrent benchmark: TTFT and inter-token latency p95, mean output tokens/s', () => {
    const imported = importResults('guidellm', fixture('guidellm-benchmarks.json'), 'benchmarks.json');
    assert.equal(imported.tool, 'guidellm');
    assert.deepEqual(imported.warnings, []);
    assert.deepEqual(
      imported.levels.map((l) => [l.concurrency, l.ttft_p95_ms, l.tpot_p95_ms, l.tok_per_sec, l.failed]),
      [
        [1, 55, 12.1, 88, 0],
        [4, 91.3, 15.2, 290.5, 0],
        [8, 170.4, 19.8, 470.2, 0],
        [16, 410.7, 29.6, 655.9, 0],
        [32, 1380.2, 52.4, 790.1, 2],
      ],
    );
    const measurement = measurementOf(target, { ttft_p95_ms: 500, tpot_p95_ms: 30 }, imported.levels);
    assert.equal(measurement.max_concurrency_at_slo, 16);
    assert.equal(measurement.throughput_tok_per_sec, 655.9);
  });

  it("reads what GuideLLM 0.8.1 itself wrote (3 concurrent levels of 8 requests, the simulated engine's)", () => {
    const imported = importResults(
      'guidellm',
      gzippedFixture('guidellm-0.8.1-benchmarks.json.gz'),
      'benchmarks.json',
    );
    assert.deepEqual(imported.warnings, []);
    assert.deepEqual(
      imported.levels.map((l) => [
        l.concurrency,
        l.requests,
        l.failed,
        l.ttft_p95_ms,
        l.tpot_p95_ms,
        l.e2e_p95_ms,
      ]),
      [
        [1, 8, 0, 8.895397186279297, 2.128314971923828, 39.739131927490234],
        [2, 8, 0, 7.929325103759766, 2.602243423461914, 44.26741600036621],
        [4, 8, 0, 10.734081268310547, 3.7774244944254556, 64.28122520446777],
      ],
    );
    const measurement = measurementOf(target, { tpot_p95_ms: 3 }, imported.levels);
    assert.equal(measurement.max_concurrency_at_slo, 2);
    assert.equal(measurement.throughput_tok_per_sec, 679.84);
  });

  it('reads the older layout too (strategy in args), and takes the mean concurrency of rate-based runs', () => {
    const imported = importResults('guidellm', fixture('guidellm-0.2-benchmarks.json'), 'old.json');
    assert.deepEqual(
      imported.levels.map((l) => [l.concurrency, l.ttft_p95_ms, l.tpot_p95_ms]),
      [
        [1, 48.2, 11.4],
        [6, 130.9, 18.2],
        [57, 3400.1, 80.3],
      ],
    );
    assert.equal(imported.warnings.length, 2);
    assert.match(
      imported.warnings[0],
      /old.json: benchmarks\[1\] \(constant\) fixes no concurrency; used the mean observed, 6/,
    );
    const measurement = measurementOf(target, { ttft_p95_ms: 200, tpot_p95_ms: 20 }, imported.levels);
    assert.equal(measurement.max_concurrency_at_slo, 6);
  });

  it('refuses a file that is not a GuideLLM report', () => {
    assert.throws(() => importResults('guidellm', '{"benchmarks": []}', 'b.json'), /b.json: benchmarks:/);
    assert.throws(
      () => importResults('guidellm', '{"benchmarks": [{"metrics": {}}]}', 'b.json'),
      /b.json: benchmarks\[0\]: metrics.request_concurrency:/,
    );
  });
});
