// GET /metrics names every tenant's scopes and models: only an admin or a token of the `metrics` role
// (Prometheus's, from LLMGW_METRICS_TOKEN or POST /api/v1/tokens) reads it, and a metrics token reads
// nothing else. The health routes and the API's description stay open.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/store/ids.ts';
import { assertError } from '../support/assertions.ts';
import { type Answer, type Stack, startStack } from '../support/stack.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('GET /metrics needs the metrics role', () => {
  let stack: Stack;
  const model = `secret-${newId().slice(0, 6)}`;
  const tokens: Record<string, string> = {};

  const metrics = async (headers: Record<string, string> = {}): Promise<Answer> => {
    const response = await fetch(`${stack.url}/metrics`, { headers });
    const text = await response.text();
    return { status: response.status, body: response.status === 200 ? text : JSON.parse(text) };
  };

  before(async () => {
    stack = await startStack();
    for (const [path, body] of [
      ['/api/v1/orgs', { name: 'Acme' }],
      ['/api/v1/teams', { org: 'Acme', name: 'ml' }],
    ] as const) {
      assert.equal((await stack.call('POST', path, body)).status, 201);
    }
    const put = await stack.call('PUT', `/api/v1/models/${model}`, {
      owner: 'team:Acme/ml',
      max_replicas: 1,
      profiles: [{ name: 'cpu', resources: { cores: 1 } }],
    });
    assert.equal(put.status, 201, JSON.stringify(put.body));
    for (const [name, grant] of [
      ['ml-operator', { role: 'operator', scope: 'team:Acme/ml' }],
      ['viewer', { role: 'viewer' }],
      ['reporter', { role: 'reporter' }],
      ['prometheus-2', { role: 'metrics' }],
    ] as const) {
      tokens[name] = await stack.token({ name, ...grant });
    }
  });
  after(() => stack.stop());

  it('without a token: 401, and not a name of the store', async () => {
    const answer = await metrics();
    assertError(answer, 401, 'a valid bearer token is needed: send the header Authorization: Bearer <token>');
    assert.ok(!JSON.stringify(answer.body).includes(model));
  });

  it('an operator, a viewer or a reporter: 403 with the sentence', async () => {
    assertError(
      await metrics(bearer(tokens['ml-operator'])),
      403,
      'an operator of team Acme / ml may not read the metrics: they cover every tenant; an admin or a metrics token reads them',
    );
    for (const who of ['viewer', 'reporter']) {
      assertError(
        await metrics(bearer(tokens[who])),
        403,
        /may not read the metrics: they cover every tenant/,
      );
    }
  });

  it('the metrics token of LLMGW_METRICS_TOKEN, one made through the API, and an admin: 200 with every model', async () => {
    for (const token of [stack.metricsToken, tokens['prometheus-2'], stack.adminToken]) {
      const answer = await metrics(bearer(token));
      assert.equal(answer.status, 200);
      assert.match(answer.body, new RegExp(`^llmgw_model_capacity_at_slo\\{model="${model}"\\} 0$`, 'm'));
    }
    const listed = await stack.call('GET', '/api/v1/tokens');
    const stored = listed.body.find((t: { name: string }) => t.name === 'metrics');
    assert.deepEqual(
      { role: stored.role, scope: stored.scope, created_by: stored.created_by },
      { role: 'metrics', scope: null, created_by: 'LLMGW_METRICS_TOKEN' },
    );
  });

  it('a metrics token reads nothing under /api/v1 and reports no load', async () => {
    const as = bearer(stack.metricsToken);
    assertError(
      await stack.call('GET', '/api/v1/models', undefined, as),
      403,
      'a metrics token may not read: a metrics token only reads GET /metrics',
    );
    assertError(
      await stack.call('POST', `/api/v1/models/${model}/load`, { in_flight: 1 }, as),
      403,
      'a metrics token may not report load: a metrics token only reads GET /metrics',
    );
    assertError(await stack.call('GET', '/api/v1/nodes', undefined, as), 403);
  });

  it('a metrics token takes no scope', async () => {
    assertError(
      await stack.call('POST', '/api/v1/tokens', {
        name: 'scoped-metrics',
        role: 'metrics',
        scope: 'org:Acme',
      }),
      400,
      'a metrics token takes no scope: the metrics cover every tenant',
    );
  });

  it('/healthz, /readyz, /openapi.json and /docs stay open', async () => {
    for (const path of ['/healthz', '/readyz', '/openapi.json', '/docs']) {
      assert.equal((await fetch(`${stack.url}${path}`)).status, 200, path);
    }
  });
});
