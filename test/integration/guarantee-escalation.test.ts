// Issue 19, item 1, replayed through the API: an operator of team Acme/ml (guaranteed 8 GPUs) makes a
// project, tries to guarantee it 1,000 GPUs and moves its model there. The grant is refused and what is
// protected does not grow; an admin's over-grant is accepted with warnings, and nesting still caps it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/store/ids.ts';
import { assertError } from '../support/assertions.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('an operator cannot raise its own guarantee through a child project', () => {
  let stack: Stack;
  let opA: string;
  // Model names reach Temporal workflow IDs, which outlive this file's stack: keep them unique.
  const chat = `chat-${newId().slice(0, 6)}`;
  const as = (token: string) => ({ authorization: `Bearer ${token}` });
  const ok = async (method: string, path: string, body?: unknown, headers?: Record<string, string>) => {
    const answer = await stack.call(method, path, body, headers);
    assert.ok(answer.status < 300, `${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  /** GPUs of chat's replicas a guarantee protects, from the API's replica list. */
  const protectedGpus = async () => {
    const replicas = await ok('GET', `/api/v1/replicas?model=${chat}`);
    return replicas
      .filter((r: { protected: boolean }) => r.protected)
      .reduce((total: number, r: { resources: { gpus: number } }) => total + r.resources.gpus, 0);
  };

  before(async () => {
    stack = await startStack({
      nodes: [
        { name: 'g', capacity: { gpus: 16, cores: 128, memory_gib: 1024 }, gpu_model: null, labels: {} },
      ],
    });
    await ok('POST', '/api/v1/orgs', { name: 'Acme' });
    for (const name of ['ml', 'web']) await ok('POST', '/api/v1/teams', { org: 'Acme', name });
    await ok('PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', guarantee: { gpus: 8 } });
    opA = await stack.token({ name: 'opA', role: 'operator', scope: 'team:Acme/ml' });
    await ok('PUT', `/api/v1/models/${chat}`, {
      owner: 'team:Acme/ml',
      min_replicas: 0,
      max_replicas: 8,
      profiles: [{ name: 'x4', priority: 1, resources: { gpus: 4 }, default_concurrency: 1 }],
    });
    // Three replicas of 4 GPUs run: 12 GPUs, of which the team's guarantee protects 8.
    for (const i of [1, 2, 3]) {
      await stack.sql`
        insert into replicas (id, model, profile, node, resources, state, created_at)
        values (${`${chat}-${i}`}, ${chat}, 'x4', 'g', ${stack.sql.json({ gpus: 4 })}, 'ready',
          ${new Date(Date.UTC(2024, 0, 1, 0, 0, i))})`;
    }
  });
  after(() => stack.stop());

  it('refuses the grant with what is left, moves nothing into protection, and an admin is only warned', async () => {
    assert.equal(await protectedGpus(), 8);
    await ok('POST', '/api/v1/projects', { team: 'Acme/ml', name: 'grab' }, as(opA));

    const grant = { scope: 'project:Acme/ml/grab', guarantee: { gpus: 1000 } };
    const refused = await stack.call('PUT', '/api/v1/quotas', grant, as(opA));
    assertError(
      refused,
      403,
      'an operator of team Acme / ml may not guarantee project Acme/ml/grab 1000 GPUs: team Acme / ml has 8 GPUs left to grant of its guarantee of 8 GPUs',
    );
    assertError(await stack.call('POST', '/api/v1/quotas/preview', grant, as(opA)), 403, refused.body.error);
    const quotas: { scope: string }[] = await ok('GET', '/api/v1/quotas');
    assert.equal(quotas.filter((q) => q.scope.startsWith('project:')).length, 0, 'no quota was stored');

    await ok('POST', `/api/v1/models/${chat}/owner`, { owner: 'project:Acme/ml/grab' }, as(opA));
    assert.equal(await protectedGpus(), 8, 'moving the model protects nothing more');

    // Out of what the team has, the operator may grant; a second grant finds nothing left.
    await ok('PUT', '/api/v1/quotas', { scope: 'project:Acme/ml/grab', guarantee: { gpus: 8 } }, as(opA));
    await ok('POST', '/api/v1/projects', { team: 'Acme/ml', name: 'more' }, as(opA));
    assertError(
      await stack.call(
        'PUT',
        '/api/v1/quotas',
        { scope: 'project:Acme/ml/more', guarantee: { gpus: 1 } },
        as(opA),
      ),
      403,
      'an operator of team Acme / ml may not guarantee project Acme/ml/more 1 GPU: team Acme / ml has 0 GPUs left to grant of its guarantee of 8 GPUs',
    );
    // Lowering is always allowed.
    await ok('PUT', '/api/v1/quotas', { scope: 'project:Acme/ml/grab', guarantee: { gpus: 4 } }, as(opA));
    assert.equal(await protectedGpus(), 8, 'the team still protects what the project no longer does');

    const admin = await ok('PUT', '/api/v1/quotas', grant);
    assert.deepEqual(admin.warnings, [
      'the guarantee of 1000 GPUs is above the 8 GPUs guaranteed to team Acme / ml, which caps what it protects',
      'the guarantees beneath team Acme / ml add up to 1000 GPUs, more than its own guarantee of 8 GPUs: not all of them can be honoured at once',
    ]);
    assert.equal(await protectedGpus(), 8, 'nesting caps an admin’s over-grant too');
  });
});
