// Running and waiting requests from each engine's /metrics (src/agent/engine-metrics.ts), on samples
// written from the engines' documentation (test/fixtures/engine-metrics/README.md).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { engineLoad, LOAD_GAUGES, loadGaugesOf, prometheusSums } from '../../../src/agent/engine-metrics.ts';

const sample = (name: string) =>
  readFileSync(join(import.meta.dirname, '..', '..', 'fixtures', 'engine-metrics', name), 'utf8');

describe("an engine's load from its /metrics", () => {
  it('vLLM: vllm:num_requests_running and _waiting, summed over its engines', () => {
    assert.deepEqual(engineLoad(sample('vllm.txt'), LOAD_GAUGES.vllm), { running: 5, waiting: 5 });
  });

  it('SGLang: sglang:num_running_reqs and sglang:num_queue_reqs', () => {
    assert.deepEqual(engineLoad(sample('sglang.txt'), LOAD_GAUGES.sglang), { running: 7, waiting: 12 });
  });

  it('llama.cpp: llamacpp:requests_processing and llamacpp:requests_deferred, unlabelled', () => {
    assert.deepEqual(engineLoad(sample('llama.cpp.txt'), LOAD_GAUGES['llama.cpp']), {
      running: 2,
      waiting: 5,
    });
  });

  it("says which gauge is missing when the text is another engine's", () => {
    assert.throws(() => engineLoad(sample('llama.cpp.txt'), LOAD_GAUGES.vllm), {
      message: 'its /metrics has no vllm:num_requests_running: is it the engine its profile says?',
    });
  });

  it('reads label values holding spaces, braces and escaped quotes, timestamps, exponents and +Inf', () => {
    const text = [
      '# HELP x:a A gauge.',
      'x:a{path="/a b}c",quote="say \\"hi\\" }"} 2 1700000000000',
      'x:a{path="other"} 1.5e1',
      'x:b +Inf',
      'x:c NaN',
      'x:d',
      'x:e{broken="} 3',
      '',
    ].join('\n');
    assert.deepEqual(
      [...prometheusSums(text)],
      [
        ['x:a', 17],
        ['x:b', Number.POSITIVE_INFINITY],
      ],
    );
  });

  it('scrapes vLLM, SGLang and llama.cpp by their names, the sim engine by vLLM names unless metrics: false, a command never', () => {
    assert.equal(loadGaugesOf({ kind: 'vllm', model: 'm' }), LOAD_GAUGES.vllm);
    assert.equal(loadGaugesOf({ kind: 'sglang', model: 'm' }), LOAD_GAUGES.sglang);
    assert.equal(loadGaugesOf({ kind: 'llama.cpp', model: 'm' }), LOAD_GAUGES['llama.cpp']);
    assert.equal(loadGaugesOf({ kind: 'sim' }), LOAD_GAUGES.vllm);
    assert.equal(loadGaugesOf({ kind: 'sim', metrics: false }), null);
    assert.equal(loadGaugesOf({ kind: 'command', argv: ['x'] }), null);
  });
});
