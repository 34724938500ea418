// The process each engine kind runs for a replica (src/agent/engine-command.ts): the engine's own
// flags to listen on the node's address and serve under the llmgw model's name, the profile's args last, the
// command engine's placeholders filled, and the replica's GPUs in its environment.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { engineCommand, fillPlaceholders, type ReplicaLaunch } from '../../../src/agent/engine-command.ts';

const launch: ReplicaLaunch = {
  replica: 'chat-r7',
  model: 'chat',
  port: 41234,
  host: '10.1.2.3',
  gpus: [2, 3],
};
const gpuEnv = { CUDA_DEVICE_ORDER: 'PCI_BUS_ID', CUDA_VISIBLE_DEVICES: '2,3' };
const listen = ['--host', '10.1.2.3', '--port', '41234'];

describe('an engine command line', () => {
  it('vLLM: vllm serve MODEL on the node address, served as the model, then the args', () => {
    assert.deepEqual(
      engineCommand(
        { kind: 'vllm', model: 'Qwen/Qwen2.5-7B', args: ['--tensor-parallel-size', '2'] },
        launch,
      ),
      {
        command: 'vllm',
        args: [
          'serve',
          'Qwen/Qwen2.5-7B',
          ...listen,
          '--served-model-name',
          'chat',
          '--tensor-parallel-size',
          '2',
        ],
        env: gpuEnv,
      },
    );
  });

  it('SGLang: python3 -m sglang.launch_server with its metrics on', () => {
    assert.deepEqual(engineCommand({ kind: 'sglang', model: '/models/llama' }, launch), {
      command: 'python3',
      args: [
        '-m',
        'sglang.launch_server',
        '--model-path',
        '/models/llama',
        ...listen,
        '--served-model-name',
        'chat',
        '--enable-metrics',
      ],
      env: gpuEnv,
    });
  });

  it('llama.cpp: llama-server -m MODEL with --metrics, aliased as the model', () => {
    assert.deepEqual(
      engineCommand({ kind: 'llama.cpp', model: '/m/tiny.gguf', args: ['-c', '4096'] }, launch),
      {
        command: 'llama-server',
        args: ['-m', '/m/tiny.gguf', ...listen, '--alias', 'chat', '--metrics', '-c', '4096'],
        env: gpuEnv,
      },
    );
  });

  it('command: its argv and env with {port}, {host}, {model} and {replica} filled, every time they appear', () => {
    assert.deepEqual(
      engineCommand(
        {
          kind: 'command',
          argv: [
            'guidellm',
            'mock-server',
            '--host',
            '{host}',
            '--port',
            '{port}',
            '--model',
            '{model}',
            '--name={replica}-{port}',
          ],
          env: { LOG_NAME: '{replica}.log', PLAIN: 'a {b} c' },
        },
        launch,
      ),
      {
        command: 'guidellm',
        args: ['mock-server', ...listen, '--model', 'chat', '--name=chat-r7-41234'],
        env: { LOG_NAME: 'chat-r7.log', PLAIN: 'a {b} c', ...gpuEnv },
      },
    );
  });

  it('sim: llmgw sim-engine with the profile settings it gives, the batch defaulting to default_concurrency', () => {
    const llmgw = join(import.meta.dirname, '..', '..', '..', 'bin', 'llmgw.mjs');
    const base = [llmgw, 'sim-engine', ...listen, '--model', 'chat', '--replica', 'chat-r7'];
    assert.deepEqual(engineCommand({ kind: 'sim' }, { ...launch, gpus: [] }), {
      command: process.execPath,
      args: base,
      env: { CUDA_DEVICE_ORDER: 'PCI_BUS_ID', CUDA_VISIBLE_DEVICES: '' },
    });
    assert.deepEqual(
      engineCommand({ kind: 'sim', base_tpot_ms: 5 }, { ...launch, defaultConcurrency: 16 }).args,
      [...base, '--max-batch', '16', '--base-tpot-ms', '5'],
    );
    assert.deepEqual(
      engineCommand(
        { kind: 'sim', max_batch: 4, tpot_growth_ms: 0, fail_start: true },
        { ...launch, defaultConcurrency: 16 },
      ).args,
      [...base, '--max-batch', '4', '--tpot-growth-ms', '0', '--fail-start'],
    );
  });

  it('leaves a text without placeholders as it is', () => {
    assert.equal(fillPlaceholders('{"port": 1}', launch), '{"port": 1}');
    assert.equal(fillPlaceholders('', launch), '');
  });
});
