// Bearer tokens and roles against a real API: each role against each endpoint family, allowed and
// refused (src/contracts/permissions.ts), what a bound viewer sees, what a reporter may report, the 401s
// (no header, a malformed one, an unknown, expired or revoked token), the token API and the audit log.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/store/ids.ts';
import { assertError } from '../support/assertions.ts';
import { type Stack, startStack } from '../support/stack.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('bearer tokens and roles', () => {
  let stack: Stack;
  // Model names reach Temporal workflow IDs, shared by every stack of the run: keep them unique.
  const tag = newId().slice(0, 6);
  const chat = `chat-${tag}`; // owned by team Acme/ml
  const trainer = `trainer-${tag}`; // owned by project Acme/ml/training
  const code = `code-${tag}`; // owned by team Acme/web
  const orphan = `orphan-${tag}`; // owned by no scope
  const query = `query-${tag}`; // owned by team Beta/data
  const tokens: Record<string, string> = {};
  const ids: Record<string, string> = {};
  const as = (who: string) => bearer(tokens[who]);

  const ok = async (method: string, path: string, body?: unknown) => {
    const answer = await stack.call(method, path, body);
    assert.ok(answer.status < 300, `${method} ${path} -> ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const model = (owner?: string) => ({
    ...(owner ? { owner } : {}),
    max_replicas: 2,
    profiles: [{ name: 'gpu', resources: { gpus: 1 } }],
  });

  before(async () => {
    stack = await startStack();
    for (const name of ['Acme', 'Beta']) ids[name] = (await ok('POST', '/api/v1/orgs', { name })).id;
    for (const [org, name] of [
      ['Acme', 'ml'],
      ['Acme', 'web'],
      ['Beta', 'data'],
    ]) {
      ids[`${org}/${name}`] = (await ok('POST', '/api/v1/teams', { org, name })).id;
    }
    ids['Acme/ml/training'] = (
      await ok('POST', '/api/v1/projects', { team: 'Acme/ml', name: 'training' })
    ).id;
    await ok('PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', guarantee: { gpus: 8 } });
    await ok('PUT', '/api/v1/quotas', { scope: 'team:Acme/web', limit: { gpus: 4 } });
    await ok('PUT', '/api/v1/quotas', { scope: 'org:Beta', limit: { gpus: 2 } });
    await ok('PUT', `/api/v1/models/${chat}`, model('team:Acme/ml'));
    await ok('PUT', `/api/v1/models/${trainer}`, model('project:Acme/ml/training'));
    await ok('PUT', `/api/v1/models/${code}`, model('team:Acme/web'));
    await ok('PUT', `/api/v1/models/${orphan}`, model());
    await ok('PUT', `/api/v1/models/${query}`, model('team:Beta/data'));
    await ok('PUT', '/api/v1/nodes/node-1', { capacity: { gpus: 8 } });
    for (const [name, profile] of [
      [chat, 'gpu'],
      [query, 'gpu'],
    ]) {
      await ok('PUT', '/api/v1/measurements', {
        model: name,
        profile,
        max_concurrency_at_slo: 8,
        throughput_tok_per_sec: 800,
        slo: { ttft_p95_ms: 500 },
      });
      await stack.sql`
        insert into replicas (id, model, profile, node, resources, state)
        values (${`r-${name}`}, ${name}, ${profile}, 'node-1', ${stack.sql.json({ gpus: 1 })}, 'ready')`;
      await stack.sql`insert into decisions (model, action, reason, inputs)
        values (${name}, 'none', ${`steady: ${name} at 1 replica`}, '{}')`;
    }
    const grants: [string, Record<string, unknown>][] = [
      ['ml-operator', { role: 'operator', scope: 'team:Acme/ml' }],
      ['viewer', { role: 'viewer' }],
      ['beta-viewer', { role: 'viewer', scope: 'org:Beta' }],
      ['reporter', { role: 'reporter' }],
      ['chat-reporter', { role: 'reporter', models: [chat] }],
      ['web-reporter', { role: 'reporter', scope: 'team:Acme/web' }],
      ['second-admin', { role: 'admin' }],
    ];
    for (const [name, grant] of grants) tokens[name] = await stack.token({ name, ...grant } as never);
  });
  after(() => stack.stop());

  describe('each role against each endpoint family', () => {
    // [who, method, path, body, status]; bodies are valid, so a status other than 401/403 is the route's own.
    const CASES: [string, string, string, unknown, number][] = [
      // tenancy
      ['viewer', 'GET', '/api/v1/orgs', undefined, 200],
      ['viewer', 'POST', '/api/v1/orgs', { name: 'Nope' }, 403],
      ['ml-operator', 'POST', '/api/v1/orgs', { name: 'Nope' }, 403],
      ['ml-operator', 'POST', '/api/v1/teams', { org: 'Acme', name: 'nope' }, 403],
      // A scope or model outside the caller's view is one that does not exist (api-leaks.test.ts).
      ['ml-operator', 'POST', '/api/v1/projects', { team: 'Acme/web', name: 'nope' }, 400],
      ['ml-operator', 'POST', '/api/v1/projects', { team: 'Acme/ml', name: 'eval' }, 201],
      ['ml-operator', 'DELETE', '/api/v1/teams/{Acme/ml}', undefined, 403],
      ['reporter', 'GET', '/api/v1/tree', undefined, 403],
      // quotas
      [
        'ml-operator',
        'PUT',
        '/api/v1/quotas',
        { scope: 'project:Acme/ml/training', guarantee: { gpus: 2 } },
        200,
      ],
      ['ml-operator', 'PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', guarantee: { gpus: 16 } }, 403],
      ['ml-operator', 'PUT', '/api/v1/quotas', { scope: 'team:Acme/web', limit: { gpus: 8 } }, 400],
      ['ml-operator', 'POST', '/api/v1/quotas/preview', { scope: 'team:Acme/ml', limit: { gpus: 1 } }, 403],
      ['ml-operator', 'DELETE', '/api/v1/quotas/team%3AAcme%2Fml', undefined, 403],
      ['viewer', 'PUT', '/api/v1/quotas', { scope: 'org:Beta', limit: { gpus: 1 } }, 403],
      ['viewer', 'GET', '/api/v1/quotas', undefined, 200],
      ['second-admin', 'PUT', '/api/v1/quotas', { scope: 'org:Acme', limit: { gpus: 64 } }, 200],
      // models
      ['ml-operator', 'PUT', `/api/v1/models/${chat}`, model('team:Acme/ml'), 200],
      ['ml-operator', 'PUT', `/api/v1/models/${trainer}`, model('project:Acme/ml/training'), 200],
      ['ml-operator', 'PUT', `/api/v1/models/new-${tag}`, model('project:Acme/ml/training'), 201],
      ['ml-operator', 'PUT', `/api/v1/models/${code}`, model('team:Acme/ml'), 409],
      ['ml-operator', 'PUT', `/api/v1/models/${orphan}`, model(), 409],
      ['ml-operator', 'PUT', `/api/v1/models/${chat}`, model('team:Acme/web'), 400],
      ['ml-operator', 'POST', `/api/v1/models/${chat}/owner`, { owner: 'org:Acme' }, 403],
      ['ml-operator', 'POST', `/api/v1/models/${chat}/owner`, { owner: '' }, 403],
      ['ml-operator', 'POST', `/api/v1/models/${trainer}/owner`, { owner: 'team:Acme/ml' }, 200],
      ['ml-operator', 'POST', `/api/v1/models/${chat}/target`, { tokens_per_sec: 100 }, 200],
      ['ml-operator', 'POST', `/api/v1/models/${code}/target`, { tokens_per_sec: 100 }, 404],
      ['ml-operator', 'DELETE', `/api/v1/models/${code}`, undefined, 404],
      ['viewer', 'PUT', `/api/v1/models/${chat}`, model('team:Acme/ml'), 403],
      ['viewer', 'GET', `/api/v1/models/${code}`, undefined, 200],
      ['ml-operator', 'GET', `/api/v1/models/${code}`, undefined, 404],
      ['ml-operator', 'GET', `/api/v1/models/${chat}/decisions`, undefined, 200],
      // measurements
      [
        'ml-operator',
        'PUT',
        '/api/v1/measurements',
        { model: chat, profile: 'gpu', max_concurrency_at_slo: 9, throughput_tok_per_sec: 900, slo: {} },
        200,
      ],
      [
        'ml-operator',
        'PUT',
        '/api/v1/measurements',
        { model: code, profile: 'gpu', max_concurrency_at_slo: 9, throughput_tok_per_sec: 900, slo: {} },
        404,
      ],
      ['reporter', 'GET', '/api/v1/measurements', undefined, 403],
      // load
      ['ml-operator', 'POST', `/api/v1/models/${chat}/load`, { in_flight: 1 }, 202],
      ['ml-operator', 'POST', `/api/v1/models/${code}/load`, { in_flight: 1 }, 404],
      ['viewer', 'POST', `/api/v1/models/${chat}/load`, { in_flight: 1 }, 403],
      // cluster
      ['ml-operator', 'GET', '/api/v1/nodes', undefined, 200],
      ['ml-operator', 'PUT', '/api/v1/nodes/node-2', { capacity: { gpus: 8 } }, 403],
      ['ml-operator', 'POST', '/api/v1/nodes/node-1/cordon', undefined, 403],
      ['viewer', 'DELETE', '/api/v1/nodes/node-1', undefined, 403],
      ['beta-viewer', 'GET', '/api/v1/nodes', undefined, 200],
      ['reporter', 'GET', '/api/v1/replicas', undefined, 403],
      ['second-admin', 'POST', '/api/v1/nodes/node-1/uncordon', undefined, 200],
      // tokens and the audit log: admins only
      ['ml-operator', 'POST', '/api/v1/tokens', { name: 'mine', role: 'viewer' }, 403],
      ['ml-operator', 'GET', '/api/v1/tokens', undefined, 403],
      ['viewer', 'DELETE', '/api/v1/tokens/reporter', undefined, 403],
      ['ml-operator', 'GET', '/api/v1/audit', undefined, 403],
      ['viewer', 'GET', '/api/v1/audit', undefined, 403],
      ['second-admin', 'GET', '/api/v1/tokens', undefined, 200],
      ['second-admin', 'GET', '/api/v1/audit', undefined, 200],
    ];
    for (const [who, method, template, body, status] of CASES) {
      it(`${who}: ${method} ${template} -> ${status}`, async () => {
        // `{Acme/ml}` stands for that scope's ID, known once the stack is seeded.
        const path = template.replace(/\{([\w/]+)\}/, (_, scope) => ids[scope]);
        const answer = await stack.call(method, path, body, as(who));
        assert.equal(answer.status, status, JSON.stringify(answer.body));
        if (status >= 400) assertError(answer, status, status === 403 ? /^an? \w+.* may not / : undefined);
      });
    }
  });

  it("an operator of team:Acme/ml may set project Acme/ml/training's quota but not raise its own team's guarantee", async () => {
    const raise = await stack.call(
      'PUT',
      '/api/v1/quotas',
      { scope: 'team:Acme/ml', guarantee: { gpus: 64 } },
      as('ml-operator'),
    );
    assertError(
      raise,
      403,
      'an operator of team Acme / ml may not change the quota of its own scope team Acme / ml',
    );
    const quotas = (await ok('GET', '/api/v1/quotas')) as any[];
    assert.deepEqual(
      quotas.find((q) => q.scope === `team:${ids['Acme/ml']}`).guarantee,
      { gpus: 8 },
      'unchanged',
    );

    const set = await stack.call(
      'PUT',
      '/api/v1/quotas',
      { scope: 'project:Acme/ml/training', guarantee: { gpus: 3 }, limit: { gpus: 4 } },
      as('ml-operator'),
    );
    assert.deepEqual(set, { status: 200, body: { scope: `project:${ids['Acme/ml/training']}` } });
    const after = ((await ok('GET', '/api/v1/quotas')) as any[]).find(
      (q) => q.scope === `project:${ids['Acme/ml/training']}`,
    );
    assert.deepEqual(
      [after.guarantee, after.limit, after.updated_by],
      [{ gpus: 3 }, { gpus: 4 }, 'ml-operator'],
    );
  });

  it('a viewer bound to org Beta never sees Acme in any list', async () => {
    const lists = [
      '/api/v1/orgs',
      '/api/v1/teams',
      '/api/v1/projects',
      '/api/v1/tree',
      '/api/v1/quotas',
      '/api/v1/models',
      '/api/v1/replicas',
      '/api/v1/measurements',
      `/api/v1/models/${query}`,
      `/api/v1/models/${query}/decisions`,
    ];
    const acme = [
      'Acme',
      ids.Acme,
      ids['Acme/ml'],
      ids['Acme/web'],
      ids['Acme/ml/training'],
      chat,
      code,
      trainer,
      orphan,
    ];
    for (const path of lists) {
      const answer = await stack.call('GET', path, undefined, as('beta-viewer'));
      assert.equal(answer.status, 200, `${path}: ${JSON.stringify(answer.body)}`);
      const text = JSON.stringify(answer.body);
      for (const word of acme) assert.ok(!text.includes(word), `${path} shows ${word}: ${text}`);
    }
    // What it does see: Beta, its team, its quota, its model with its replica, measurement and decision.
    const seen = async (path: string) => (await stack.call('GET', path, undefined, as('beta-viewer'))).body;
    assert.deepEqual(
      (await seen('/api/v1/orgs')).map((o: any) => o.name),
      ['Beta'],
    );
    assert.deepEqual(
      (await seen('/api/v1/tree')).map((n: any) => [n.name, n.children.map((c: any) => c.name)]),
      [['Beta', ['data']]],
    );
    assert.deepEqual(
      (await seen('/api/v1/models')).map((m: any) => m.name),
      [query],
    );
    assert.deepEqual(
      (await seen('/api/v1/replicas')).map((r: any) => r.model),
      [query],
    );
    assert.deepEqual(
      (await seen('/api/v1/measurements')).map((m: any) => m.model),
      [query],
    );
    assert.equal((await seen('/api/v1/quotas')).length, 1);
    // An Acme model is one it is not told of, by name or by its decisions.
    assertError(await stack.call('GET', `/api/v1/models/${chat}`, undefined, as('beta-viewer')), 404);
    assertError(
      await stack.call('GET', `/api/v1/models/${chat}/decisions`, undefined, as('beta-viewer')),
      404,
    );
    // An unbound viewer sees both orgs.
    const all = (await stack.call('GET', '/api/v1/orgs', undefined, as('viewer'))).body.map(
      (o: any) => o.name,
    );
    assert.deepEqual(all.sort(), ['Acme', 'Beta']);
  });

  it('a team viewer sees its team as the root of its tree', async () => {
    const web = await stack.token({ name: 'web-viewer', role: 'viewer', scope: 'team:Acme/web' });
    const tree = (await stack.call('GET', '/api/v1/tree', undefined, bearer(web))).body;
    assert.deepEqual(
      tree.map((n: any) => [n.path, n.children.length]),
      [['Acme/web', 0]],
    );
  });

  it('a reporter reports load only for its models, or within its scope', async () => {
    const load = (who: string, name: string) =>
      stack.call('POST', `/api/v1/models/${name}/load`, { in_flight: 2, source: who }, as(who));
    assert.equal((await load('chat-reporter', chat)).status, 202);
    // A model it may not report for is one it is not told of.
    assertError(await load('chat-reporter', code), 404, `there is no model "${code}"`);
    assert.equal((await load('web-reporter', code)).status, 202);
    assertError(await load('web-reporter', chat), 404, `there is no model "${chat}"`);
    assertError(await load('web-reporter', orphan), 404, `there is no model "${orphan}"`);
    assert.equal((await load('reporter', orphan)).status, 202);
    assert.equal((await load('reporter', query)).status, 202);
    assertError(
      await stack.call('GET', '/api/v1/models', undefined, as('chat-reporter')),
      403,
      'a reporter may not read: a reporter only reports load (POST /api/v1/models/{name}/load)',
    );
  });

  it('every operation a reporter or a viewer may not do is refused before its input is read', async () => {
    const doc = (await stack.call('GET', '/openapi.json', undefined, { authorization: undefined })).body;
    const paths = Object.entries<any>(doc.paths).filter(([path]) => path.startsWith('/api/v1/'));
    assert.ok(paths.length >= 20, `${paths.length} paths`);
    const wrong: string[] = [];
    for (const [template, item] of paths) {
      const path = template.replace('{name}', chat).replace('{id}', 'x').replace('{scope}', 'org%3AAcme');
      for (const method of Object.keys(item)) {
        const call = (who: string | null) =>
          stack.call(
            method.toUpperCase(),
            path,
            method === 'get' || method === 'delete' ? undefined : { junk: true },
            who ? as(who) : { authorization: undefined },
          );
        const isLoad = method === 'post' && template === '/api/v1/models/{name}/load';
        const adminOnly = /^\/api\/v1\/(tokens|audit)/.test(template);
        const expect = (who: string | null, refused: boolean, status: number) => async () => {
          const answer = await call(who);
          if ((answer.status === status) !== refused) {
            wrong.push(
              `${who ?? 'no token'} ${method} ${template} -> ${answer.status} ${JSON.stringify(answer.body)}`,
            );
          }
        };
        await expect(null, true, 401)();
        await expect('reporter', !isLoad, 403)();
        // A stream a viewer may open never ends (GET /api/v1/events: the console's tests read it).
        const streams = Object.hasOwn(item[method].responses?.['200']?.content ?? {}, 'text/event-stream');
        const viewerRefused = method !== 'get' || adminOnly;
        if (viewerRefused || !streams) await expect('viewer', viewerRefused, 403)();
      }
    }
    assert.deepEqual(wrong, []);
  });

  describe('401: a valid bearer token is needed', () => {
    const NEEDED = /^a valid bearer token is needed: /;
    it('without a header, or with a malformed one', async () => {
      for (const authorization of [
        undefined,
        '',
        'Bearer',
        'Bearer ',
        `Basic ${Buffer.from('admin:admin').toString('base64')}`,
        'Token abc',
        `Bearer ${'x'.repeat(600)}`,
        'Bearer two words',
        `Bearer ${stack.adminToken}\u0000`,
      ]) {
        const answer = await stack.call('GET', '/api/v1/orgs', undefined, { authorization }).catch(
          // A header fetch will not send at all (NUL) is as good as none.
          () => ({ status: 401, body: { error: 'a valid bearer token is needed: (not sent)' } }),
        );
        assertError(answer, 401, NEEDED);
      }
      const answer = await fetch(`${stack.url}/api/v1/orgs`);
      assert.equal(answer.headers.get('www-authenticate'), 'Bearer');
    });

    it('with a token that is unknown, expired or revoked', async () => {
      assertError(
        await stack.call('GET', '/api/v1/orgs', undefined, bearer(`llmgw_${'A'.repeat(43)}`)),
        401,
        'a valid bearer token is needed: this one is unknown, was revoked or expired',
      );
      const soon = await stack.token({
        name: 'soon',
        role: 'viewer',
        expires_at: new Date(Date.now() + 60_000).toISOString(),
      });
      assert.equal((await stack.call('GET', '/api/v1/orgs', undefined, bearer(soon))).status, 200);
      await stack.sql`update api_tokens set expires_at = now() - interval '1 second' where name = 'soon'`;
      assertError(
        await stack.call('GET', '/api/v1/orgs', undefined, bearer(soon)),
        401,
        'a valid bearer token is needed: this one is unknown, was revoked or expired',
      );

      const gone = await stack.token({ name: 'gone', role: 'admin' });
      assert.equal((await stack.call('GET', '/api/v1/orgs', undefined, bearer(gone))).status, 200);
      assert.deepEqual(await stack.call('DELETE', '/api/v1/tokens/gone'), {
        status: 200,
        body: { revoked: 'gone' },
      });
      assertError(
        await stack.call('GET', '/api/v1/orgs', undefined, bearer(gone)),
        401,
        'a valid bearer token is needed: this one is unknown, was revoked or expired',
      );
    });

    it('takes the scheme in any case, and leaves /healthz, /readyz, /openapi.json and /docs open', async () => {
      const lower = await stack.call('GET', '/api/v1/orgs', undefined, {
        authorization: `bearer ${stack.adminToken}`,
      });
      assert.equal(lower.status, 200);
      // /metrics is not: metrics-auth.test.ts.
      for (const path of ['/healthz', '/readyz', '/openapi.json', '/docs']) {
        assert.equal((await fetch(`${stack.url}${path}`)).status, 200, path);
      }
    });
  });

  describe('the token API', () => {
    it('shows a secret once, never lists it nor its hash, and refuses grants that make no sense', async () => {
      const made = await stack.call('POST', '/api/v1/tokens', {
        name: 'dana@example.com',
        role: 'operator',
        scope: 'team:Acme/web',
        expires_at: '2999-01-01T00:00:00Z',
      });
      assert.equal(made.status, 201, JSON.stringify(made.body));
      assert.deepEqual(Object.keys(made.body).sort(), ['name', 'role', 'scope', 'token']);
      assert.match(made.body.token, /^llmgw_[\w-]{43}$/);
      assert.equal(made.body.scope, `team:${ids['Acme/web']}`);

      const listed = await stack.call('GET', '/api/v1/tokens');
      const text = JSON.stringify(listed.body);
      assert.ok(!text.includes(made.body.token) && !text.includes(stack.adminToken), 'no secret listed');
      assert.ok(!/secret|sha256|hash/.test(text), 'no hash listed');
      const dana = listed.body.find((t: any) => t.name === 'dana@example.com');
      assert.deepEqual(
        { ...dana, created_at: undefined },
        {
          name: 'dana@example.com',
          role: 'operator',
          scope: `team:${ids['Acme/web']}`,
          scope_name: 'Acme / web',
          models: null,
          node: null,
          node_address: null,
          node_bounds: null,
          created_by: 'bootstrap',
          created_at: undefined,
          expires_at: '2999-01-01T00:00:00.000Z',
        },
      );
      const [{ stored }] = await stack.sql`
        select encode(secret_sha256, 'hex') as stored from api_tokens where name = 'dana@example.com'`;
      assert.ok(!stored.includes(Buffer.from(made.body.token).toString('hex')), 'the store keeps a hash');

      const refusals: [unknown, number, string | RegExp][] = [
        [{ name: 'x', role: 'operator' }, 400, 'an operator token needs a scope: the one it manages beneath'],
        [{ name: 'x', role: 'admin', scope: 'org:Acme' }, 400, /an admin token takes no scope/],
        [{ name: 'x', role: 'viewer', models: ['a'] }, 400, 'only a reporter token is limited to models'],
        [{ name: 'x', role: 'root' }, 400, /^role /],
        [{ name: 'x', role: 'viewer', expires_at: '2001-01-01T00:00:00Z' }, 400, /is not in the future/],
        [{ name: 'x', role: 'viewer', scope: 'team:Nowhere/x' }, 400, 'there is no team "Nowhere/x"'],
        [{ name: '../x', role: 'viewer' }, 400, /^name must be/],
        [
          { name: 'dana@example.com', role: 'viewer' },
          409,
          'there is already a token named "dana@example.com"',
        ],
      ];
      for (const [body, status, message] of refusals) {
        assertError(await stack.call('POST', '/api/v1/tokens', body), status, message);
      }
      assertError(await stack.call('DELETE', '/api/v1/tokens/nobody'), 404, 'there is no token "nobody"');
    });
  });

  it('records every change in the audit log: who, what, before and after, and never a secret', async () => {
    await stack.call(
      'PUT',
      '/api/v1/quotas',
      { scope: 'team:Acme/web', limit: { gpus: 6 } },
      as('second-admin'),
    );
    const audit = (await stack.call('GET', '/api/v1/audit?limit=1000')).body as any[];
    const change = audit.find((e) => e.action === 'quota.set' && e.actor === 'second-admin');
    assert.equal(change.target, `team:${ids['Acme/web']}`);
    assert.deepEqual(change.before.limit, { gpus: 4 });
    assert.deepEqual(change.after.limit, { gpus: 6 });
    assert.match(change.at, /^\d{4}-\d\d-\d\dT/);
    assert.ok(audit[0].id > audit.at(-1).id, 'newest first');

    const actions = new Set(audit.map((e) => e.action));
    for (const action of [
      'org.create',
      'team.create',
      'project.create',
      'quota.set',
      'model.put',
      'model.owner',
      'measurement.put',
      'node.put',
      'node.uncordon',
      'token.create',
      'token.revoke',
    ]) {
      assert.ok(actions.has(action), `${action} is recorded`);
    }
    const text = JSON.stringify(audit);
    for (const secret of [stack.adminToken, ...Object.values(tokens)])
      assert.ok(!text.includes(secret), 'no secret');
    // A refused change is recorded nowhere.
    assert.ok(!audit.some((e) => e.actor === 'ml-operator' && e.target === `team:${ids['Acme/ml']}`));
    assertError(await stack.call('GET', '/api/v1/audit?limit=0'), 400);
  });
});
