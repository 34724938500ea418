// The API's own description and operations (API.md "Operations" and "Conventions"): /openapi.json is
// an OpenAPI 3.1 document listing every /api/v1 path, /docs is HTML, health and readiness, unknown
// paths, and that bad input of any kind gets {"error": "<one sentence>"}, never a 500 or a stack trace.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp } from '../../src/api/app.ts';
import type { Sql } from '../../src/store/db.ts';
import { newId } from '../../src/store/ids.ts';
import { assertError } from '../support/assertions.ts';
import { idleReconcilers, type Stack, startStack } from '../support/stack.ts';

/** Every path and method of API.md under /api/v1. */
const CONTRACT: [string, string][] = [
  ['post', '/api/v1/orgs'],
  ['get', '/api/v1/orgs'],
  ['delete', '/api/v1/orgs/{id}'],
  ['post', '/api/v1/teams'],
  ['get', '/api/v1/teams'],
  ['delete', '/api/v1/teams/{id}'],
  ['post', '/api/v1/projects'],
  ['get', '/api/v1/projects'],
  ['delete', '/api/v1/projects/{id}'],
  ['get', '/api/v1/tree'],
  ['get', '/api/v1/quotas'],
  ['put', '/api/v1/quotas'],
  ['delete', '/api/v1/quotas/{scope}'],
  ['post', '/api/v1/quotas/preview'],
  ['put', '/api/v1/models/{name}'],
  ['get', '/api/v1/models'],
  ['get', '/api/v1/models/{name}'],
  ['delete', '/api/v1/models/{name}'],
  ['post', '/api/v1/models/{name}/owner'],
  ['post', '/api/v1/models/{name}/load'],
  ['post', '/api/v1/models/{name}/target'],
  ['get', '/api/v1/models/{name}/decisions'],
  ['put', '/api/v1/measurements'],
  ['get', '/api/v1/measurements'],
  ['put', '/api/v1/nodes/{name}'],
  ['get', '/api/v1/nodes'],
  ['post', '/api/v1/nodes/{name}/cordon'],
  ['post', '/api/v1/nodes/{name}/uncordon'],
  ['delete', '/api/v1/nodes/{name}'],
  ['get', '/api/v1/replicas'],
];

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

/** Every `$ref` in a document. */
function refs(value: unknown, found: string[] = []): string[] {
  if (Array.isArray(value)) for (const item of value) refs(item, found);
  else if (value && typeof value === 'object') {
    for (const [key, inner] of Object.entries(value)) {
      if (key === '$ref' && typeof inner === 'string') found.push(inner);
      else refs(inner, found);
    }
  }
  return found;
}

describe('API description and operations', () => {
  let stack: Stack;
  const tag = newId().slice(0, 6);

  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  describe('GET /openapi.json', () => {
    let doc: any;
    before(async () => {
      const answer = await stack.call('GET', '/openapi.json');
      assert.equal(answer.status, 200);
      doc = answer.body;
    });

    it('is an OpenAPI 3.1 document with info and paths', () => {
      assert.match(doc.openapi, /^3\.1\.\d+$/);
      assert.equal(typeof doc.info?.title, 'string');
      assert.equal(typeof doc.info?.version, 'string');
      assert.equal(typeof doc.paths, 'object');
      for (const path of Object.keys(doc.paths)) assert.match(path, /^\//);
    });

    it('lists every /api/v1 path and method of API.md', () => {
      const missing = CONTRACT.filter(([method, path]) => !doc.paths[path]?.[method]).map((x) => x.join(' '));
      assert.deepEqual(missing, []);
    });

    it('describes every /api/v1 route the app serves', () => {
      const app = createApp({
        sql: stack.sql,
        reconcilers: idleReconcilers,
        temporalReachable: async () => true,
        policy: stack.config.policy,
      });
      const served = app.routes
        .filter((route) => route.path.startsWith('/api/v1') && METHODS.includes(route.method.toLowerCase()))
        .map((route) => [route.method.toLowerCase(), route.path.replace(/:(\w+)/g, '{$1}')]);
      assert.ok(served.length >= CONTRACT.length, `${served.length} routes`);
      const undocumented = served
        .filter(([method, path]) => !doc.paths[path]?.[method])
        .map((x) => x.join(' '));
      assert.deepEqual(undocumented, []);
    });

    it('is well formed: responses with descriptions, declared path parameters, references that resolve', () => {
      const operationIds = new Set<string>();
      for (const [path, item] of Object.entries<any>(doc.paths)) {
        const templated = [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]);
        for (const method of METHODS.filter((m) => item[m])) {
          const operation = item[method];
          const where = `${method} ${path}`;
          const statuses = Object.keys(operation.responses ?? {});
          assert.ok(statuses.length > 0, `${where} has responses`);
          for (const status of statuses) {
            assert.match(status, /^([1-5]\d\d|[1-5]XX|default)$/, where);
            assert.equal(typeof operation.responses[status].description, 'string', `${where} ${status}`);
          }
          const parameters = [...(item.parameters ?? []), ...(operation.parameters ?? [])];
          for (const name of templated) {
            const declared = parameters.find((p: any) => p.in === 'path' && p.name === name);
            assert.ok(declared, `${where} declares {${name}}`);
            assert.equal(declared.required, true, `${where} {${name}} is required`);
          }
          if (operation.requestBody) assert.ok(operation.requestBody.content?.['application/json'], where);
          if (operation.operationId) {
            assert.ok(
              !operationIds.has(operation.operationId),
              `operationId ${operation.operationId} is unique`,
            );
            operationIds.add(operation.operationId);
          }
          if (path.startsWith('/api/v1')) {
            const errorStatuses = statuses.filter((s) => /^[45]/.test(s));
            assert.ok(errorStatuses.length > 0, `${where} describes its errors`);
          }
        }
      }
      for (const ref of refs(doc)) {
        assert.match(ref, /^#\/components\//, ref);
        const target = ref
          .slice(2)
          .split('/')
          .reduce((node: any, key) => node?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
        assert.ok(target, `${ref} resolves`);
      }
      assert.ok(doc.components?.schemas?.Error, 'the error shape is described');
    });

    // A named schema made nullable once rendered as its bare $ref, refusing the null the API sends.
    it('lets a named schema the API may send as null be null', () => {
      for (const [schema, property] of [
        ['Token', 'node_bounds'],
        ['ModelSummary', 'last_decision'],
      ]) {
        const described = doc.components.schemas[schema].properties[property];
        assert.ok(
          described.anyOf?.some((option: any) => option.type === 'null'),
          `${schema}.${property} admits null: ${JSON.stringify(described)}`,
        );
      }
    });
  });

  it('GET /docs is an HTML page built from /openapi.json', async () => {
    const response = await fetch(`${stack.url}/docs`);
    assert.equal(response.status, 200);
    assert.match(response.headers.get('content-type') ?? '', /^text\/html/);
    const html = await response.text();
    assert.match(html, /^<!doctype html>/i);
    assert.match(html, /openapi\.json/);
  });

  it('GET /healthz -> 200', async () => {
    assert.deepEqual(await stack.call('GET', '/healthz'), { status: 200, body: { ok: true } });
  });

  it('GET /readyz -> 200 when the store and Temporal answer, with the count of missing reconcilers', async () => {
    assert.deepEqual(await stack.call('GET', '/readyz'), {
      status: 200,
      body: { ok: true, store: 'up', temporal: 'up', reconcilers_missing: 0 },
    });
  });

  it('GET /readyz -> 503 naming what is unreachable', async () => {
    const down = (async () => {
      throw Object.assign(new Error('refused'), { code: 'ECONNREFUSED' });
    }) as unknown as Sql;
    const ask = async (sql: Sql, temporal: boolean) => {
      const app = createApp({
        sql,
        reconcilers: idleReconcilers,
        temporalReachable: async () => temporal,
        policy: stack.config.policy,
      });
      const response = await app.request('/readyz');
      return { status: response.status, body: await response.json() };
    };
    assertError(await ask(stack.sql, false), 503, 'Temporal is unreachable');
    assertError(await ask(down, true), 503, 'the store (Postgres) is unreachable');
    assertError(await ask(down, false), 503, 'the store (Postgres) and Temporal are unreachable');
  });

  it('an unknown path -> 404 with a JSON error', async () => {
    assertError(
      await stack.call('GET', '/api/v1/nothing-here'),
      404,
      'there is no GET /api/v1/nothing-here; see /docs',
    );
    assertError(await stack.call('GET', '/nope'), 404, /^there is no GET \/nope/);
    assertError(await stack.call('POST', '/api/v2/orgs', { name: 'x' }), 404);
    assertError(await stack.call('PATCH', '/api/v1/quotas', { scope: 'org:x' }), 404);
    // A method a path does not take is unknown too, whatever middleware the path has for its body.
    assertError(
      await stack.call('PUT', '/api/v1/quotas/preview', { scope: 'org:x' }),
      404,
      /^there is no PUT \/api\/v1\/quotas\/preview/,
    );
    assertError(await stack.call('GET', '/api/v1/models/some-model/owner'), 404);
    assertError(await stack.call('DELETE', '/api/v1/models/some-model/owner'), 404);
  });

  it('updated_by is the name of the token that made the change; a header cannot claim another', async () => {
    assert.equal((await stack.call('POST', '/api/v1/orgs', { name: 'Who' })).status, 201);
    const quota = async () =>
      (await stack.call('GET', '/api/v1/quotas')).body.find((q: any) => q.name === 'Who');
    await stack.call('PUT', '/api/v1/quotas', { scope: 'org:Who', limit: { gpus: 1 } });
    assert.equal((await quota()).updated_by, 'bootstrap');
    const dana = await stack.token({ name: 'dana@example.com', role: 'admin' });
    await stack.call(
      'PUT',
      '/api/v1/quotas',
      { scope: 'org:Who', limit: { gpus: 2 } },
      { authorization: `Bearer ${dana}`, 'x-llmgw-user': 'erin' },
    );
    assert.equal((await quota()).updated_by, 'dana@example.com');
  });

  it('bad input of any kind gets a 4xx {"error": "<one sentence>"}, never a 500', async () => {
    const model = `sweep-${tag}`;
    const profiles = [{ name: 'p', resources: { gpus: 1 } }];
    assert.equal(
      (await stack.call('PUT', `/api/v1/models/${model}`, { max_replicas: 1, profiles })).status,
      201,
    );
    assert.equal((await stack.call('PUT', '/api/v1/nodes/sweep', { capacity: { gpus: 1 } })).status, 201);
    const state = async () => ({
      model: (await stack.call('GET', `/api/v1/models/${model}`)).body,
      nodes: (await stack.call('GET', '/api/v1/nodes')).body,
      orgs: (await stack.call('GET', '/api/v1/orgs')).body,
      quotas: (await stack.call('GET', '/api/v1/quotas')).body,
    });
    const before = await state();
    const nested = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const cases: [string, string, unknown, Record<string, string>?][] = [
      ['PUT', '/api/v1/quotas', 'null'],
      ['PUT', '/api/v1/quotas', '[]'],
      ['PUT', '/api/v1/quotas', '"team:x"'],
      ['PUT', '/api/v1/quotas', nested],
      ['PUT', '/api/v1/quotas', '{"scope": "team:x", "__proto__": {"limit": {"gpus": 1}}}'],
      ['PUT', '/api/v1/quotas', { scope: 'x'.repeat(1000), limit: { gpus: 1 } }],
      ['PUT', '/api/v1/quotas', { scope: 'team:a\u0000b', limit: { gpus: 1 } }],
      ['PUT', '/api/v1/quotas', { scope: 'team:x', limit: { gpus: 1e300 * 10 } }],
      ['PUT', '/api/v1/quotas', new Uint8Array([0xff, 0xfe, 0x7b]) as unknown as string],
      ['PUT', '/api/v1/quotas', '<quota scope="team:x"/>', { 'content-type': 'application/xml' }],
      ['POST', '/api/v1/quotas/preview', '{'],
      ['DELETE', '/api/v1/quotas/%E0%A4%A', undefined],
      ['DELETE', '/api/v1/quotas/team%3A', undefined],
      ['DELETE', '/api/v1/quotas/team%3Aa%00b', undefined],
      ['POST', '/api/v1/orgs', { name: 'a\u0000b' }],
      ['POST', '/api/v1/orgs', nested],
      ['POST', '/api/v1/teams', { org: 'x'.repeat(400), name: 'y' }],
      ['POST', '/api/v1/teams', { org: 'org:\u0000', name: 'y' }],
      ['DELETE', '/api/v1/orgs/a%00b', undefined],
      ['DELETE', '/api/v1/teams/%00', undefined],
      ['DELETE', '/api/v1/projects/%E0%A4%A', undefined],
      ['DELETE', `/api/v1/orgs/${'x'.repeat(5000)}`, undefined],
      ['GET', '/api/v1/models/%ZZ', undefined],
      ['GET', '/api/v1/models/a%00b', undefined],
      ['PUT', `/api/v1/models/${model}`, { max_replicas: 1, profiles: 'p' }],
      [
        'PUT',
        `/api/v1/models/${model}`,
        { max_replicas: 1, profiles: [{ name: 'p', resources: { gpus: 1 }, gpu_model: 'H\u0000' }] },
      ],
      [
        'PUT',
        `/api/v1/models/${model}`,
        {
          max_replicas: 1,
          profiles: [
            { name: 'p', resources: { gpus: 1 }, engine: { kind: 'command', argv: ['serve', '\u0000'] } },
          ],
        },
      ],
      [
        'PUT',
        `/api/v1/models/${model}`,
        '{"max_replicas": 1e400, "profiles": [{"name": "p", "resources": {"gpus": 1}}]}',
      ],
      ['POST', `/api/v1/models/${model}/owner`, '[]'],
      ['POST', `/api/v1/models/${model}/owner`, { owner: 'team:\u0000' }],
      ['PUT', '/api/v1/nodes/sweep', { capacity: { gpus: 1 }, labels: { zone: 'a\u0000' } }],
      ['PUT', '/api/v1/nodes/sweep', { capacity: { gpus: 1 }, labels: { 'a\u0000': 'b' } }],
      ['PUT', '/api/v1/nodes/sweep', { capacity: { gpus: 1 }, gpu_model: '\u0000' }],
      ['PUT', '/api/v1/nodes/sweep', { capacity: { gpus: 1 }, labels: ['a'] }],
      ['POST', '/api/v1/nodes/a%00b/cordon', undefined],
      ['DELETE', '/api/v1/nodes/%ZZ', undefined],
      ['GET', '/api/v1/replicas?model=a%00b', undefined],
      ['GET', `/api/v1/replicas?model=${'m'.repeat(100)}`, undefined],
      ['GET', '/api/v1/replicas?state=ready&state=stopped', undefined],
    ];
    const failures: string[] = [];
    for (const [method, path, body, headers] of cases) {
      const answer =
        body instanceof Uint8Array
          ? await fetch(`${stack.url}${path}`, {
              method,
              body: body as unknown as BodyInit,
              headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.adminToken}` },
            }).then(async (r) => ({ status: r.status, body: await r.json() }))
          : await stack.call(method, path, body, headers);
      const shaped =
        answer.body &&
        typeof answer.body === 'object' &&
        Object.keys(answer.body).join() === 'error' &&
        typeof answer.body.error === 'string' &&
        !/\n/.test(answer.body.error);
      if (answer.status < 400 || answer.status >= 500 || !shaped) {
        failures.push(
          `${method} ${path.slice(0, 60)} -> ${answer.status} ${JSON.stringify(answer.body).slice(0, 200)}`,
        );
      }
    }
    assert.deepEqual(failures, []);
    assert.deepEqual(await state(), before, 'the refused requests changed nothing');
  });
});
