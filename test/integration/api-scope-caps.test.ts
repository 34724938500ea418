// Models and scopes an operator may create within its scope are capped (LLMGW_MAX_MODELS_PER_SCOPE,
// LLMGW_MAX_PROJECTS_PER_SCOPE); an admin is not. A refusal is a 403 with one sentence and changes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/store/ids.ts';
import { assertError } from '../support/assertions.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('caps on what an operator creates within its scope', () => {
  let stack: Stack;
  let operator: Record<string, string>;
  // Model names reach Temporal workflow IDs, shared by every stack of the run: keep them unique.
  const tag = newId().slice(0, 6);
  const name = (n: number) => `capped-${tag}-${n}`;
  const spec = (owner: string) => ({
    owner,
    max_replicas: 1,
    profiles: [{ name: 'cpu', priority: 1, resources: { cores: 1 } }],
  });
  const ok = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const answer = await stack.call(method, path, body, headers);
    assert.ok(answer.status < 300, `${method} ${path} -> ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer;
  };
  const projects = async () =>
    ((await ok('GET', '/api/v1/projects')).body as { path: string }[]).map((p) => p.path).sort();

  before(async () => {
    stack = await startStack({
      env: { LLMGW_MAX_MODELS_PER_SCOPE: '2', LLMGW_MAX_PROJECTS_PER_SCOPE: '1' },
    });
    await ok('POST', '/api/v1/orgs', { name: 'Acme' });
    await ok('POST', '/api/v1/teams', { org: 'Acme', name: 'ml' });
    const token = await stack.token({ name: 'ml-operator', role: 'operator', scope: 'team:Acme/ml' });
    operator = { authorization: `Bearer ${token}` };
  });
  after(() => stack.stop());

  it('refuses a project beyond the cap with the variable that sets it, and adds none', async () => {
    await ok('POST', '/api/v1/projects', { team: 'Acme/ml', name: 'one' }, operator);
    assertError(
      await stack.call('POST', '/api/v1/projects', { team: 'Acme/ml', name: 'two' }, operator),
      403,
      'an operator of team Acme / ml may create at most 1 projects beneath its scope (LLMGW_MAX_PROJECTS_PER_SCOPE); delete one first, or ask an admin',
    );
    assert.deepEqual(await projects(), ['Acme/ml/one']);
  });

  it('refuses a model beyond the cap, counting the models owned beneath the scope too', async () => {
    await ok('PUT', `/api/v1/models/${name(1)}`, spec('team:Acme/ml'), operator);
    await ok('PUT', `/api/v1/models/${name(2)}`, spec('project:Acme/ml/one'), operator);
    assertError(
      await stack.call('PUT', `/api/v1/models/${name(3)}`, spec('team:Acme/ml'), operator),
      403,
      'an operator of team Acme / ml may create at most 2 models within its scope (LLMGW_MAX_MODELS_PER_SCOPE); delete one first, or ask an admin',
    );
    assert.equal((await stack.call('GET', `/api/v1/models/${name(3)}`)).status, 404, 'nothing was added');
    // Changing a model it has is no creation.
    assert.equal((await ok('PUT', `/api/v1/models/${name(1)}`, spec('team:Acme/ml'), operator)).status, 200);
  });

  it('does not cap an admin', async () => {
    await ok('POST', '/api/v1/projects', { team: 'Acme/ml', name: 'two' });
    assert.equal((await ok('PUT', `/api/v1/models/${name(3)}`, spec('team:Acme/ml'))).status, 201);
    assert.deepEqual(await projects(), ['Acme/ml/one', 'Acme/ml/two']);
  });
});
