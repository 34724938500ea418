// What an agent runs for a profile (src/agent/node-engines.ts engineToRun): its runtime filled with its
// parameters, checked again on the node against the runtime as the control plane sent it, or its
// inline engine; a refusal is the sentence the replica fails with.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { engineToRun } from '../../../src/agent/node-engines.ts';
import type { ReplicaToRun } from '../../../src/domain/node-work.ts';

const runtime: NonNullable<ReplicaToRun['runtime']> = {
  name: 'vllm-qwen',
  kind: 'vllm',
  model: '{params.model}',
  args: ['--max-model-len', '{params.len}'],
  env: { VLLM_LOGGING_LEVEL: 'INFO' },
  secret_env: { HF_TOKEN: 'hf-token' },
  params: {
    model: { type: 'string', prefix: 'Qwen/' },
    len: { type: 'integer', min: 1024, max: 8192, default: 4096 },
  },
};
const profile = (extra: Partial<ReplicaToRun['profile']>): ReplicaToRun['profile'] => ({
  name: 'h100',
  resources: { gpus: 1 },
  ...extra,
});

describe('the engine an agent runs for a profile', () => {
  it('fills its runtime with its parameters', () => {
    assert.deepEqual(
      engineToRun(profile({ runtime: 'vllm-qwen', params: { model: 'Qwen/Qwen2.5-0.5B' } }), runtime),
      {
        engine: { kind: 'vllm', model: 'Qwen/Qwen2.5-0.5B', args: ['--max-model-len', '4096'] },
        env: { VLLM_LOGGING_LEVEL: 'INFO' },
        secretEnv: { HF_TOKEN: 'hf-token' },
      },
    );
  });

  it("runs an admin's inline engine as it is", () => {
    const engine = { kind: 'command' as const, argv: ['/opt/engine', '--port', '{port}'] };
    assert.deepEqual(engineToRun(profile({ engine }), undefined), { engine });
  });

  const REFUSED: [string, ReplicaToRun['profile'], ReplicaToRun['runtime'], string][] = [
    [
      'parameters the runtime refuses now (changed since they were accepted, or a store written by hand)',
      profile({ runtime: 'vllm-qwen', params: { model: '/etc' } }),
      runtime,
      'profile h100: runtime "vllm-qwen": parameter "model" must start with "Qwen/"',
    ],
    [
      'a runtime the control plane did not send',
      profile({ runtime: 'vllm-qwen', params: { model: 'Qwen/x' } }),
      undefined,
      'profile h100 names runtime "vllm-qwen", which does not exist',
    ],
    ['no engine at all', profile({}), undefined, 'profile h100 has no engine: an agent has nothing to run'],
    [
      'a runtime whose filled engine the engines schema refuses',
      profile({ runtime: 'sim', params: { max_batch: 0 } }),
      { name: 'sim', kind: 'sim', params: { max_batch: { type: 'integer', min: 0, max: 10 } } },
      'profile h100: engine.max_batch must be at least 1',
    ],
  ];
  for (const [what, given, sent, sentence] of REFUSED) {
    it(`refuses ${what}`, () => assert.throws(() => engineToRun(given, sent), { message: sentence }));
  }
});
