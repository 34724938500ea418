// A runtime's parameters (src/domain/runtime-params.ts): each rule against values it takes and refuses,
// one sentence naming the runtime and the parameter, and templates filled word for word, never split.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { RuntimeSpec } from '../../../src/domain/runtime.ts';
import { checkParams, paramRefusal, resolveRuntime } from '../../../src/domain/runtime-params.ts';

const VLLM: RuntimeSpec = {
  kind: 'vllm',
  model: '{params.model}',
  args: ['--max-model-len', '{params.max_model_len}', '--dtype={params.dtype}'],
  env: { VLLM_LOGGING_PREFIX: '{replica}:{params.dtype}' },
  secret_env: { HF_TOKEN: 'hf-token' },
  params: {
    model: { type: 'string', prefix: 'Qwen/' },
    max_model_len: { type: 'integer', min: 1024, max: 32768, default: 8192 },
    dtype: { type: 'string', allowed: ['auto', 'bfloat16'], default: 'auto' },
  },
};

describe('runtime parameters', () => {
  const RULES: [string, Parameters<typeof paramRefusal>[0], unknown, string | null][] = [
    ['a listed string', { type: 'string', allowed: ['a', 'b'] }, 'b', null],
    ['an unlisted string', { type: 'string', allowed: ['a', 'b'] }, 'c', 'must be one of "a", "b"'],
    ['a prefixed string', { type: 'string', prefix: 'Qwen/' }, 'Qwen/Qwen2.5-7B', null],
    ['another prefix', { type: 'string', prefix: 'Qwen/' }, '/etc', 'must start with "Qwen/"'],
    [
      'a climb out of the prefix',
      { type: 'string', prefix: '/models/' },
      '/models/../etc',
      'must not hold a ".." path segment',
    ],
    [
      'a flag',
      { type: 'string', pattern: '.*' },
      '--trust-remote-code',
      'must not start with "-" (it would be read as a flag)',
    ],
    [
      'a placeholder',
      { type: 'string', pattern: '.*' },
      '{port}',
      'must not hold braces or control characters',
    ],
    ['a newline', { type: 'string', pattern: '.*' }, 'a\nb', 'must not hold braces or control characters'],
    ['a matching string', { type: 'string', pattern: '[a-z]+' }, 'abc', null],
    ['a part matching only', { type: 'string', pattern: '[a-z]+' }, 'abc;id', 'must match [a-z]+'],
    ['an empty string', { type: 'string', allowed: [''] }, '', 'must be 1 to 512 characters'],
    ['a number for a string', { type: 'string', allowed: ['1'] }, 1, 'must be a string'],
    ['an integer in range', { type: 'integer', min: 1, max: 10 }, 10, null],
    ['an integer above', { type: 'integer', min: 1, max: 10 }, 11, 'must be a whole number from 1 to 10'],
    [
      'a fraction for an integer',
      { type: 'integer', min: 1, max: 10 },
      1.5,
      'must be a whole number from 1 to 10',
    ],
    ['text for an integer', { type: 'integer', min: 1, max: 10 }, '5', 'must be a whole number from 1 to 10'],
    ['a number in range', { type: 'number', min: 0, max: 1 }, 0.5, null],
    ['a number below', { type: 'number', min: 0, max: 1 }, -0.1, 'must be a number from 0 to 1'],
    ['a boolean', { type: 'boolean' }, false, null],
    ['text for a boolean', { type: 'boolean' }, 'true', 'must be true or false'],
  ];
  for (const [what, rule, value, expected] of RULES) {
    it(`${what}: ${expected ?? 'taken'}`, () => assert.equal(paramRefusal(rule, value), expected));
  }

  it('refuses in one sentence naming the runtime and the parameter', () => {
    const cases: [Record<string, unknown>, string][] = [
      [
        { model: 'Qwen/x', args: ['--trust-remote-code'] },
        'runtime "vllm-chat" takes no parameter "args": it takes model, max_model_len, dtype',
      ],
      [{ model: '/etc' }, 'runtime "vllm-chat": parameter "model" must start with "Qwen/"'],
      [{}, 'runtime "vllm-chat" needs parameter "model"'],
      [
        { model: 'Qwen/x', max_model_len: 1e6 },
        'runtime "vllm-chat": parameter "max_model_len" must be a whole number from 1024 to 32768',
      ],
    ];
    for (const [given, why] of cases)
      assert.deepEqual(checkParams('vllm-chat', VLLM, given), { ok: false, why });
    assert.deepEqual(checkParams('bare', { kind: 'command', argv: ['x'] }, { a: 1 }), {
      ok: false,
      why: 'runtime "bare" takes no parameter "a": it takes none',
    });
  });

  it('fills each template word with the checked values and the defaults', () => {
    const resolved = resolveRuntime('vllm-chat', VLLM, { model: 'Qwen/Qwen2.5-0.5B', dtype: 'bfloat16' });
    assert.deepEqual(resolved, {
      ok: true,
      resolved: {
        engine: {
          kind: 'vllm',
          model: 'Qwen/Qwen2.5-0.5B',
          args: ['--max-model-len', '8192', '--dtype=bfloat16'],
        },
        env: { VLLM_LOGGING_PREFIX: '{replica}:bfloat16' },
        secretEnv: { HF_TOKEN: 'hf-token' },
      },
    });
  });

  it('a sim runtime gives the sim engine its settings; one left out is the engine default', () => {
    const sim: RuntimeSpec = { kind: 'sim', params: { max_batch: { type: 'integer', min: 1, max: 64 } } };
    assert.deepEqual(resolveRuntime('sim', sim, {}), {
      ok: true,
      resolved: { engine: { kind: 'sim' }, env: {}, secretEnv: {} },
    });
    assert.deepEqual(resolveRuntime('sim', sim, { max_batch: 8 }), {
      ok: true,
      resolved: { engine: { kind: 'sim', max_batch: 8 }, env: {}, secretEnv: {} },
    });
  });

  it('whatever an operator gives, the command line is the template with whole words in the same places', () => {
    const command: RuntimeSpec = {
      kind: 'command',
      argv: ['/opt/engine', '--model', '{params.name}', '--port', '{port}'],
      params: { name: { type: 'string', pattern: '.*' } },
    };
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (name) => {
        const result = resolveRuntime('x', command, { name });
        if (!result.ok) return;
        const argv = result.resolved.engine.argv as string[];
        assert.equal(argv.length, 5);
        assert.deepEqual(
          [argv[0], argv[1], argv[3], argv[4]],
          ['/opt/engine', '--model', '--port', '{port}'],
        );
        assert.equal(argv[2], name);
        assert.ok(!name.startsWith('-') && !/[{}]/.test(name));
      }),
      { numRuns: 500 },
    );
  });
});
