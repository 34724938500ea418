// A profile's engine as the API takes it (src/contracts/schemas/engine.ts): each kind's shape, and one
// sentence, naming the field, for each mistake.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeIssue } from '../../../src/contracts/errors.ts';
import { ProfileSchema } from '../../../src/contracts/schemas/models.ts';

const parse = (engine: unknown) => ProfileSchema.safeParse({ name: 'p', resources: { gpus: 1 }, engine });
const sentence = (engine: unknown) => {
  const result = parse(engine);
  return result.success ? 'accepted' : describeIssue(result.error.issues[0]);
};

describe('a profile engine', () => {
  it('takes each kind, as given', () => {
    const engines = [
      { kind: 'vllm', model: 'Qwen/Qwen2.5-7B-Instruct', args: ['--max-model-len', '8192'] },
      { kind: 'sglang', model: '/models/llama-3-8b', start_timeout_s: 1200 },
      { kind: 'llama.cpp', model: '/models/tiny.gguf', args: [] },
      { kind: 'command', argv: ['guidellm', 'mock-server', '--port', '{port}'], env: { NAME: '{replica}' } },
      // Braces that are no placeholder's (JSON given to an engine's flag) go through as they are.
      { kind: 'command', argv: ['serve', '--config', '{"a":{"b":1}}'] },
      { kind: 'sim' },
      { kind: 'sim', max_batch: 4, base_tpot_ms: 20, tpot_growth_ms: 0, fail_start: true, metrics: false },
    ];
    for (const engine of engines)
      assert.deepEqual(parse(engine).data?.engine, engine, JSON.stringify(engine));
  });

  const MISTAKES: [string, unknown, string][] = [
    [
      'an unknown kind',
      { kind: 'docker' },
      'engine.kind must be one of "vllm", "sglang", "llama.cpp", "command", "sim"',
    ],
    ['no kind', {}, 'engine.kind must be one of "vllm", "sglang", "llama.cpp", "command", "sim"'],
    ['not an object', 'vllm', 'engine must be an object'],
    ['vLLM without a model', { kind: 'vllm' }, 'engine.model is required'],
    ['an empty model', { kind: 'vllm', model: '' }, 'engine.model must not be empty'],
    ['a model that is no string', { kind: 'sglang', model: 7 }, 'engine.model must be a string'],
    [
      'a NUL in a model',
      { kind: 'sglang', model: 'a\u0000b' },
      'engine.model must not contain a NUL character',
    ],
    [
      'args as one string',
      { kind: 'vllm', model: 'm', args: '--x' },
      'engine.args must be a list of strings',
    ],
    ['an arg that is no string', { kind: 'vllm', model: 'm', args: [1] }, 'engine.args.0 must be a string'],
    [
      'a field of another kind',
      { kind: 'llama.cpp', model: 'm', argv: ['x'] },
      'unknown field "argv" in engine',
    ],
    [
      'a start timeout of 0',
      { kind: 'vllm', model: 'm', start_timeout_s: 0 },
      'engine.start_timeout_s must be at least 1 second',
    ],
    [
      'a fractional start timeout',
      { kind: 'vllm', model: 'm', start_timeout_s: 1.5 },
      'engine.start_timeout_s must be a whole number of seconds',
    ],
    [
      'a start timeout over a day',
      { kind: 'sim', start_timeout_s: 86_401 },
      'engine.start_timeout_s must be at most 86400 seconds (a day)',
    ],
    [
      'a start timeout as text',
      { kind: 'sim', start_timeout_s: '10' },
      'engine.start_timeout_s must be a number of seconds',
    ],
    ['a command without argv', { kind: 'command' }, 'engine.argv is required'],
    ['an empty argv', { kind: 'command', argv: [] }, 'engine.argv must name the program to run'],
    [
      'an argv without a program',
      { kind: 'command', argv: ['', 'x'] },
      'engine.argv must start with the program to run, not ""',
    ],
    [
      'a placeholder misspelt',
      { kind: 'command', argv: ['x', '--port={prot}'] },
      'engine.argv.1 names {prot}, which is no placeholder (they are {port}, {host}, {model}, {replica})',
    ],
    [
      'a very long argument',
      { kind: 'command', argv: ['x', 'a'.repeat(8193)] },
      'engine.argv.1 must be at most 8192 characters',
    ],
    [
      'too many arguments',
      { kind: 'vllm', model: 'm', args: Array(257).fill('-v') },
      'engine.args must have at most 256 arguments',
    ],
    [
      'env that is a list',
      { kind: 'command', argv: ['x'], env: ['A=b'] },
      'engine.env must be an object of variable names to strings',
    ],
    [
      'env with a bad name',
      { kind: 'command', argv: ['x'], env: { '1A': 'b' } },
      'engine.env.1A is not a variable name (letters, digits and "_", not starting with a digit)',
    ],
    ['env with a number', { kind: 'command', argv: ['x'], env: { A: 1 } }, 'engine.env.A must be a string'],
    [
      'env with a placeholder misspelt',
      { kind: 'command', argv: ['x'], env: { A: '{replika}' } },
      'engine.env.A names {replika}, which is no placeholder (they are {port}, {host}, {model}, {replica})',
    ],
    [
      'env that sets the GPUs',
      { kind: 'command', argv: ['x'], env: { CUDA_VISIBLE_DEVICES: '0' } },
      "engine.env must not set CUDA_VISIBLE_DEVICES: the agent sets it to the replica's own GPUs",
    ],
    ['a sim batch of 0', { kind: 'sim', max_batch: 0 }, 'engine.max_batch must be at least 1'],
    ['a sim batch of 1.5', { kind: 'sim', max_batch: 1.5 }, 'engine.max_batch must be a whole number'],
    ['a negative sim speed', { kind: 'sim', base_tpot_ms: -1 }, 'engine.base_tpot_ms must not be negative'],
    ['a sim growth as text', { kind: 'sim', tpot_growth_ms: '2' }, 'engine.tpot_growth_ms must be a number'],
    ['fail_start as text', { kind: 'sim', fail_start: 'yes' }, 'engine.fail_start must be true or false'],
    ['metrics as a number', { kind: 'sim', metrics: 0 }, 'engine.metrics must be true or false'],
    ['a sim field unknown', { kind: 'sim', batch: 4 }, 'unknown field "batch" in engine'],
  ];

  for (const [mistake, engine, expected] of MISTAKES) {
    it(`refuses ${mistake} in one sentence`, () => assert.equal(sentence(engine), expected));
  }
});
