// Runtimes (issue 30) through the real API on a real Postgres: every role against every runtime field
// and every inline engine field, allowed or refused as README's role table says; parameters refused in
// one sentence naming the runtime and the parameter; a viewer reads variables' names, never values; a
// model stored with an inline engine keeps it, with a warning, and its operator keeps it only as it is.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/store/ids.ts';
import { agentGrant } from '../support/agents.ts';
import { type Stack, startStack } from '../support/stack.ts';

const VLLM_RUNTIME = {
  kind: 'vllm',
  model: '{params.model}',
  args: ['--max-model-len', '{params.max_model_len}'],
  env: { VLLM_LOGGING_LEVEL: 'INFO' },
  secret_env: { HF_TOKEN: 'hf-token' },
  params: {
    model: { type: 'string', prefix: 'Qwen/' },
    max_model_len: { type: 'integer', min: 1024, max: 32768, default: 8192 },
  },
};

/** One runtime body per field a runtime has, each valid, each setting that field. */
const RUNTIME_FIELDS: Record<string, Record<string, unknown>> = {
  kind: { kind: 'sim' },
  description: { kind: 'sim', description: 'the simulated engine' },
  model: { kind: 'vllm', model: 'Qwen/Qwen2.5-0.5B' },
  args: { kind: 'vllm', model: 'Qwen/Qwen2.5-0.5B', args: ['--enforce-eager'] },
  argv: { kind: 'command', argv: ['/usr/bin/env', 'true'] },
  env: { kind: 'vllm', model: 'Qwen/Qwen2.5-0.5B', env: { VLLM_LOGGING_LEVEL: 'INFO' } },
  secret_env: { kind: 'vllm', model: 'Qwen/Qwen2.5-0.5B', secret_env: { HF_TOKEN: 'hf-token' } },
  params: { kind: 'sim', params: { max_batch: { type: 'integer', min: 1, max: 64 } } },
  start_timeout_s: { kind: 'sim', start_timeout_s: 60 },
};

/** One inline engine per field an engine has (the attacks among them). */
const ENGINE_FIELDS: Record<string, Record<string, unknown>> = {
  kind: { kind: 'sim' },
  model: { kind: 'vllm', model: '/etc' },
  args: { kind: 'vllm', model: 'Qwen/Qwen2.5-0.5B', args: ['--trust-remote-code'] },
  argv: { kind: 'command', argv: ['sh', '-c', 'id > /tmp/x'] },
  env: { kind: 'command', argv: ['/usr/bin/env'], env: { LD_PRELOAD: '/tmp/x.so', PATH: '/tmp' } },
  max_batch: { kind: 'sim', max_batch: 4 },
  base_tpot_ms: { kind: 'sim', base_tpot_ms: 10 },
  tpot_growth_ms: { kind: 'sim', tpot_growth_ms: 1 },
  fail_start: { kind: 'sim', fail_start: true },
  metrics: { kind: 'sim', metrics: false },
  start_timeout_s: { kind: 'sim', start_timeout_s: 60 },
};

/** What README's role table says each role may do with runtimes and engines. */
const MAY: Record<
  string,
  { writeRuntime: boolean; readRuntime: boolean; inline: boolean; useRuntime: boolean }
> = {
  admin: { writeRuntime: true, readRuntime: true, inline: true, useRuntime: true },
  operator: { writeRuntime: false, readRuntime: true, inline: false, useRuntime: true },
  viewer: { writeRuntime: false, readRuntime: true, inline: false, useRuntime: false },
  reporter: { writeRuntime: false, readRuntime: false, inline: false, useRuntime: false },
  metrics: { writeRuntime: false, readRuntime: false, inline: false, useRuntime: false },
  client: { writeRuntime: false, readRuntime: false, inline: false, useRuntime: false },
  agent: { writeRuntime: false, readRuntime: false, inline: false, useRuntime: false },
};

describe('runtimes: admins define them, operators choose them', () => {
  let stack: Stack;
  const tag = newId().slice(0, 6);
  const name = (base: string) => `${base}-${tag}`;
  const tokens = new Map<string, string>();
  const as = (role: string) => ({ authorization: `Bearer ${tokens.get(role)}` });
  const profile = (extra: Record<string, unknown>) => ({
    name: 'p',
    resources: { gpus: 1 },
    ...extra,
  });
  const model = (extra: Record<string, unknown>) => ({
    owner: 'team:Acme/ml',
    min_replicas: 0,
    max_replicas: 1,
    profiles: [profile(extra)],
  });

  before(async () => {
    stack = await startStack();
    await stack.call('POST', '/api/v1/orgs', { name: 'Acme' });
    await stack.call('POST', '/api/v1/teams', { org: 'Acme', name: 'ml' });
    tokens.set('admin', await stack.token({ name: 'admin2', role: 'admin' }));
    tokens.set('operator', await stack.token({ name: 'op', role: 'operator', scope: 'team:Acme/ml' }));
    tokens.set('viewer', await stack.token({ name: 'view', role: 'viewer' }));
    tokens.set('reporter', await stack.token({ name: 'rep', role: 'reporter' }));
    tokens.set('metrics', await stack.token({ name: 'met', role: 'metrics' }));
    tokens.set('client', await stack.token({ name: 'cli', role: 'client', scope: 'team:Acme/ml' }));
    tokens.set('agent', await stack.token({ ...agentGrant('n1'), name: 'agt' }));
    assert.equal((await stack.call('PUT', '/api/v1/runtimes/vllm-qwen', VLLM_RUNTIME)).status, 201);
  });
  after(() => stack?.stop());

  it('every role against every runtime field: only an admin defines, replaces or deletes a runtime', async () => {
    for (const [role, may] of Object.entries(MAY)) {
      for (const [field, body] of Object.entries(RUNTIME_FIELDS)) {
        const runtime = `rt-${field.replaceAll('_', '-')}-${role}`;
        const put = await stack.call('PUT', `/api/v1/runtimes/${runtime}`, body, as(role));
        assert.equal(
          put.status,
          may.writeRuntime ? 201 : 403,
          `${role} PUT ${field}: ${JSON.stringify(put.body)}`,
        );
        if (!may.writeRuntime && role === 'operator')
          assert.match(
            put.body.error,
            /^an operator of team Acme \/ ml may not change runtimes: only an admin may$/,
          );
      }
      const list = await stack.call('GET', '/api/v1/runtimes', undefined, as(role));
      assert.equal(list.status, may.readRuntime ? 200 : 403, `${role} lists`);
      const one = await stack.call('GET', '/api/v1/runtimes/vllm-qwen', undefined, as(role));
      assert.equal(one.status, may.readRuntime ? 200 : 403, `${role} reads one`);
      if (may.readRuntime) {
        // Names of variables to all who read runtimes; the fixed values to admins only; a secret's value never.
        assert.deepEqual(one.body.env, { VLLM_LOGGING_LEVEL: role === 'admin' ? 'INFO' : '(hidden)' });
        assert.deepEqual(one.body.secret_env, { HF_TOKEN: 'hf-token' });
      }
      const removed = await stack.call('DELETE', `/api/v1/runtimes/rt-kind-admin`, undefined, as(role));
      assert.equal(removed.status, may.writeRuntime ? 200 : 403, `${role} deletes`);
      if (may.writeRuntime) await stack.call('PUT', '/api/v1/runtimes/rt-kind-admin', RUNTIME_FIELDS.kind);
    }
  });

  it('every role against every inline engine field: only an admin writes one', async () => {
    for (const [role, may] of Object.entries(MAY)) {
      for (const [field, engine] of Object.entries(ENGINE_FIELDS)) {
        const target = name(`inline-${field.replaceAll('_', '-')}-${role}`);
        const put = await stack.call('PUT', `/api/v1/models/${target}`, model({ engine }), as(role));
        assert.equal(
          put.status,
          may.inline ? 201 : 403,
          `${role} engine.${field}: ${JSON.stringify(put.body)}`,
        );
        if (role === 'operator') {
          const [, named] =
            /\(profile "p", engine\.(\w+)\): only an admin may; name a runtime instead/.exec(
              put.body.error,
            ) ?? [];
          assert.ok(named in engine, `${put.body.error} names a field of ${JSON.stringify(engine)}`);
          assert.match(put.body.error, /^an operator of team Acme \/ ml may not write an inline engine /);
          assert.equal((await stack.call('GET', `/api/v1/models/${target}`)).status, 404, 'nothing stored');
        }
      }
    }
  });

  it('every role naming a runtime with parameters: admins and operators may, as model changers', async () => {
    for (const [role, may] of Object.entries(MAY)) {
      const target = name(`uses-runtime-${role}`);
      const put = await stack.call(
        'PUT',
        `/api/v1/models/${target}`,
        model({ runtime: 'vllm-qwen', params: { model: 'Qwen/Qwen2.5-0.5B', max_model_len: 4096 } }),
        as(role),
      );
      assert.equal(put.status, may.useRuntime ? 201 : 403, `${role}: ${JSON.stringify(put.body)}`);
    }
  });

  it('refuses parameters in one sentence naming the runtime and the parameter, and stores nothing', async () => {
    const cases: [Record<string, unknown>, number, string][] = [
      [
        { runtime: 'vllm-qwen', params: { model: 'Qwen/x', args: ['--trust-remote-code'] } },
        400,
        'profiles.0.params.args must be a string, a number or a boolean',
      ],
      [
        { runtime: 'vllm-qwen', params: { model: 'Qwen/x', args: '--trust-remote-code' } },
        400,
        'profile "p": runtime "vllm-qwen" takes no parameter "args": it takes model, max_model_len',
      ],
      [
        { runtime: 'vllm-qwen', params: { model: '/etc' } },
        400,
        'profile "p": runtime "vllm-qwen": parameter "model" must start with "Qwen/"',
      ],
      [
        { runtime: 'vllm-qwen', params: { model: 'Qwen/--x', max_model_len: 99 } },
        400,
        'profile "p": runtime "vllm-qwen": parameter "max_model_len" must be a whole number from 1024 to 32768',
      ],
      [{ runtime: 'vllm-qwen', params: {} }, 400, 'profile "p": runtime "vllm-qwen" needs parameter "model"'],
      [{ runtime: 'nope', params: {} }, 400, 'profile "p" names runtime "nope", which does not exist'],
      [
        { runtime: 'vllm-qwen', params: { model: 'Qwen/x' }, engine: { kind: 'sim' } },
        400,
        'profile "p" gives both a runtime and an engine; give one',
      ],
    ];
    for (const [extra, status, error] of cases) {
      const target = name('refused');
      const answer = await stack.call('PUT', `/api/v1/models/${target}`, model(extra), as('operator'));
      assert.deepEqual(answer, { status, body: { error } });
      assert.equal((await stack.call('GET', `/api/v1/models/${target}`)).status, 404);
    }
  });

  it("a model stored with an inline engine keeps it, with a warning; its operator may keep it as it is, not change it; a viewer reads the variables' names only", async () => {
    const kept = name('kept');
    const engine = {
      kind: 'command',
      argv: ['/opt/engine', '--port', '{port}'],
      env: { HF_TOKEN: 'hf_secret_value' },
    };
    assert.equal((await stack.call('PUT', `/api/v1/models/${kept}`, model({ engine }))).status, 201);

    for (const role of ['viewer', 'operator']) {
      const read = await stack.call('GET', `/api/v1/models/${kept}`, undefined, as(role));
      assert.deepEqual(read.body.profiles[0].engine, { ...engine, env: { HF_TOKEN: '(hidden)' } }, role);
      assert.ok(!JSON.stringify(read.body).includes('hf_secret_value'), role);
      assert.deepEqual(read.body.warnings, [
        'profile "p" runs an inline command engine, which only an admin may change; an admin may define a runtime for it and name that instead',
      ]);
    }
    const admin = await stack.call('GET', `/api/v1/models/${kept}`, undefined, as('admin'));
    assert.deepEqual(admin.body.profiles[0].engine, engine);

    // What the operator read, sent back with a new max_replicas: the engine is kept as stored.
    const read = (await stack.call('GET', `/api/v1/models/${kept}`, undefined, as('operator'))).body;
    const back = { owner: 'team:Acme/ml', min_replicas: 0, max_replicas: 2, profiles: read.profiles };
    assert.equal((await stack.call('PUT', `/api/v1/models/${kept}`, back, as('operator'))).status, 200);
    const stored = await stack.sql`select engine from profiles where model = ${kept}`;
    assert.deepEqual(stored[0].engine, engine, 'the hidden value stood for the stored one');

    const changed = structuredClone(back);
    changed.profiles[0].engine.argv = ['sh', '-c', 'id'];
    const refused = await stack.call('PUT', `/api/v1/models/${kept}`, changed, as('operator'));
    assert.equal(refused.status, 403);
    assert.match(refused.body.error, /\(profile "p", engine\.argv\): only an admin may/);
  });

  it('a runtime that profiles name cannot be deleted; one changed under them warns of the parameters it now refuses', async () => {
    const removed = await stack.call('DELETE', '/api/v1/runtimes/vllm-qwen');
    assert.equal(removed.status, 409);
    assert.match(
      removed.body.error,
      /^models .* name runtime vllm-qwen; give their profiles another runtime first$/,
    );
    const narrowed = {
      ...VLLM_RUNTIME,
      params: { ...VLLM_RUNTIME.params, model: { type: 'string', allowed: ['Qwen/Qwen2.5-7B'] } },
    };
    const put = await stack.call('PUT', '/api/v1/runtimes/vllm-qwen', narrowed);
    assert.equal(put.status, 200);
    assert.ok(
      put.body.warnings.some((w: string) =>
        w.endsWith(
          'profile p: runtime "vllm-qwen": parameter "model" must be one of "Qwen/Qwen2.5-7B"; its next start will fail',
        ),
      ),
      JSON.stringify(put.body),
    );
  });

  it('refuses runtime definitions that could not run, in one sentence', async () => {
    const cases: [Record<string, unknown>, string | RegExp][] = [
      [{ kind: 'vllm' }, 'model is required for a vllm runtime'],
      [{ kind: 'command' }, 'argv is required for a command runtime'],
      [{ kind: 'command', argv: ['x', '{params.p}'] }, 'params must declare p, which {params.p} names'],
      [
        { kind: 'sim', params: { argv: { type: 'boolean' } } },
        /^params argv is no setting of the sim engine/,
      ],
      [
        { kind: 'vllm', model: 'x', params: { m: { type: 'string' } } },
        'params.m must give exactly one of allowed, prefix or pattern: no string is free',
      ],
      [
        { kind: 'vllm', model: 'x', params: { m: { type: 'integer', min: 5, max: 1 } } },
        'params.m min (5) is above max (1)',
      ],
      [
        { kind: 'vllm', model: 'x', params: { m: { type: 'string', pattern: '(' } } },
        'params.m.pattern is not a valid regular expression',
      ],
      [
        { kind: 'vllm', model: 'x', env: { CUDA_VISIBLE_DEVICES: '0' } },
        /^env must not set CUDA_VISIBLE_DEVICES/,
      ],
      [{ kind: 'lol' }, 'kind must be one of "vllm", "sglang", "llama.cpp", "command", "sim"'],
    ];
    for (const [body, error] of cases) {
      const answer = await stack.call('PUT', '/api/v1/runtimes/bad', body);
      assert.equal(answer.status, 400, JSON.stringify(body));
      if (typeof error === 'string') assert.equal(answer.body.error, error);
      else assert.match(answer.body.error, error);
    }
    assert.equal((await stack.call('GET', '/api/v1/runtimes/bad')).status, 404);
  });
});
