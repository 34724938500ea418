// `llmgw ctl runtime` (src/cli/ctl/runtime.ts) against a real API: apply a YAML file of runtimes, list
// them, read one (variables' values as the token may read them), remove one; an operator is refused.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ctl } from '../support/ctl.ts';
import { type Stack, startStack } from '../support/stack.ts';

const RUNTIMES = `
name: vllm-qwen
kind: vllm
description: vLLM serving Qwen models
model: "{params.model}"
args: ["--max-model-len", "{params.max_model_len}"]
env: { VLLM_LOGGING_LEVEL: INFO }
secret_env: { HF_TOKEN: hf-token }
params:
  model: { type: string, prefix: "Qwen/" }
  max_model_len: { type: integer, min: 1024, max: 32768, default: 8192 }
---
name: sim
kind: sim
params:
  max_batch: { type: integer, min: 1, max: 64 }
`;

describe('llmgw ctl runtime', () => {
  let stack: Stack;
  let file: string;
  before(async () => {
    stack = await startStack();
    file = join(mkdtempSync(join(tmpdir(), 'llmgw-ctl-runtime-')), 'runtimes.yaml');
    writeFileSync(file, RUNTIMES);
  });
  after(() => stack.stop());

  it('applies a file of runtimes, then a second apply updates them', async () => {
    const applied = await ctl(stack, 'runtime', 'apply', '-f', file);
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(applied.stdout, 'runtime vllm-qwen created\nruntime sim created\n');
    const again = await ctl(stack, 'runtime', 'apply', '-f', file, '-o', 'json');
    assert.deepEqual(JSON.parse(again.stdout), [
      { name: 'vllm-qwen', created: false },
      { name: 'sim', created: false },
    ]);
  });

  it('lists them and shows one: its command line, variables and the rules of its parameters', async () => {
    const list = await ctl(stack, 'runtime', 'list');
    assert.equal(list.code, 0, list.stderr);
    assert.deepEqual(
      list.stdout
        .trimEnd()
        .split('\n')
        .map((line) => line.split(/\s+/)),
      [
        ['NAME', 'KIND', 'PARAMS', 'ENV', 'UPDATED_BY'],
        ['sim', 'sim', 'max_batch', '-', 'bootstrap'],
        ['vllm-qwen', 'vllm', 'model,max_model_len', 'VLLM_LOGGING_LEVEL,HF_TOKEN', 'bootstrap'],
      ],
    );
    const one = await ctl(stack, 'runtime', 'get', 'vllm-qwen');
    assert.equal(one.code, 0, one.stderr);
    const shown = one.stdout.replace(/updated: +\S+ by/, 'updated:    T by');
    assert.equal(
      shown,
      [
        'name:       vllm-qwen',
        'kind:       vllm',
        'about:      vLLM serving Qwen models',
        'model:      {params.model}',
        'args:       --max-model-len {params.max_model_len}',
        'env:        VLLM_LOGGING_LEVEL=INFO',
        'secret env: HF_TOKEN <- secret hf-token',
        'updated:    T by bootstrap',
        'params:',
        '  model: string starting with "Qwen/"',
        '  max_model_len: integer from 1024 to 32768, default 8192',
        '',
      ].join('\n'),
    );
  });

  it("shows an operator the variables' names only, and refuses it a change", async () => {
    await stack.call('POST', '/api/v1/orgs', { name: 'Acme' });
    const token = await stack.token({ name: 'op', role: 'operator', scope: 'org:Acme' });
    const as = { url: stack.url, adminToken: token };
    const one = await ctl(as, 'runtime', 'get', 'vllm-qwen', '-o', 'json');
    assert.deepEqual(JSON.parse(one.stdout).env, { VLLM_LOGGING_LEVEL: '(hidden)' });
    const refused = await ctl(as, 'runtime', 'rm', 'sim');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /an operator of org Acme may not change runtimes: only an admin may/);
  });

  it('removes a runtime', async () => {
    const removed = await ctl(stack, 'runtime', 'rm', 'sim');
    assert.equal(removed.code, 0, removed.stderr);
    assert.equal(removed.stdout, 'removed runtime sim\n');
    assert.equal((await stack.call('GET', '/api/v1/runtimes/sim')).status, 404);
  });
});
