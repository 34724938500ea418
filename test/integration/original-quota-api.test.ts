// Holds llmgw to the original (Go) quota API that scripts and operators already use (issue 20): every
// status and sentence its handler could answer, for GET/PUT /api/v1/quotas, DELETE
// /api/v1/quotas/{scope} and POST /api/v1/models/{name}/owner, compared character for character.
// Where llmgw answers otherwise on purpose (API.md), the test says so and asserts llmgw's answer.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createApp } from '../../src/api/app.ts';
import { connect } from '../../src/store/db.ts';
import { newId } from '../../src/store/ids.ts';
import { assertError } from '../support/assertions.ts';
import { type Answer, idleReconcilers, type Stack, startStack } from '../support/stack.ts';

const NOT_A_SCOPE = 'is not org:NAME, team:ORG/TEAM or project:ORG/TEAM/PROJECT';
const EMPTY_QUOTA = 'a quota needs a guarantee or a limit; to remove one, DELETE it';
/** The fields of the original's quota view; llmgw adds `borrowed`, `preemption` and `priority`. */
const VIEW_FIELDS = ['scope', 'name', 'guarantee', 'limit', 'holds', 'updated_by', 'updated_at'];

/**
 * Scopes that do not resolve and the original's sentence for each: malformed (quoted as typed), not
 * found (the path after the colon, trimmed; a path of the wrong depth too) or ambiguous. Go's %q quotes.
 */
const SCOPE_ERRORS: [text: string, sentence: string][] = [
  ['x', `"x" ${NOT_A_SCOPE}`],
  [' team: ', `" team: " ${NOT_A_SCOPE}`],
  ['Team:Acme/ml', `"Team:Acme/ml" ${NOT_A_SCOPE}`],
  ['galaxy:Acme', `"galaxy:Acme" ${NOT_A_SCOPE}`],
  ['team:nope', 'there is no team "nope"'],
  [' team:Acme/nope ', 'there is no team "Acme/nope"'],
  ['project:Acme/ml/nope', 'there is no project "Acme/ml/nope"'],
  ['team:Acme/ml/extra', 'there is no team "Acme/ml/extra"'],
  ['org:Acme/ml', 'there is no org "Acme/ml"'],
  ['team:Acme//ml', 'there is no team "Acme//ml"'],
  ['team:say "hi"', 'there is no team "say \\"hi\\""'],
  ['team:tab\there', 'there is no team "tab\\there"'],
  ['team:ml', '"ml" could be any of 2 teams; give its ID'],
];

describe('compatibility with the original quota API', () => {
  let stack: Stack;
  const ids: Record<string, string> = {};
  // Model names reach Temporal workflow IDs, which outlive this file's stack: keep them unique.
  const chat = `compat-${newId().slice(0, 6)}`;
  const ok = async (method: string, path: string, body?: unknown) => {
    const answer = await stack.call(method, path, body);
    assert.ok(answer.status < 300, `${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
    return answer.body;
  };
  const put = (body: unknown, headers?: Record<string, string>) =>
    stack.call('PUT', '/api/v1/quotas', body, headers);
  const remove = (scope: string) => stack.call('DELETE', `/api/v1/quotas/${encodeURIComponent(scope)}`);
  const setOwner = (body: unknown, model = chat) => stack.call('POST', `/api/v1/models/${model}/owner`, body);

  before(async () => {
    stack = await startStack();
    ids.acme = (await ok('POST', '/api/v1/orgs', { name: 'Acme' })).id;
    ids.globex = (await ok('POST', '/api/v1/orgs', { name: 'Globex' })).id;
    ids.ml = (await ok('POST', '/api/v1/teams', { org: 'Acme', name: 'ml' })).id;
    ids.web = (await ok('POST', '/api/v1/teams', { org: 'Acme', name: 'web' })).id;
    await ok('POST', '/api/v1/teams', { org: 'Globex', name: 'ml' });
    ids.training = (await ok('POST', '/api/v1/projects', { team: 'Acme/ml', name: 'training' })).id;
    await ok('PUT', `/api/v1/models/${chat}`, {
      owner: 'team:Acme/ml',
      max_replicas: 1,
      profiles: [{ name: 'gpu', resources: { gpus: 1 } }],
    });
  });
  after(() => stack.stop());

  describe('PUT /api/v1/quotas', () => {
    it('200 {"scope": "<kind>:<id>"} for a scope named by ID, path, any case and spacing, or last segment', async () => {
      for (const [scope, key] of [
        [`team:${ids.ml}`, `team:${ids.ml}`],
        ['team:Acme/ml', `team:${ids.ml}`],
        ['team:acme / ML', `team:${ids.ml}`],
        ['  team:Acme/ml\t', `team:${ids.ml}`],
        ['team:web', `team:${ids.web}`],
        ['org:acme', `org:${ids.acme}`],
        ['project:Acme/ml/training', `project:${ids.training}`],
        ['project:training', `project:${ids.training}`],
      ]) {
        assert.deepEqual(
          await put({ scope, limit: { gpus: 8 } }),
          { status: 200, body: { scope: key } },
          scope,
        );
      }
    });

    it('reads the body as JSON whatever its Content-Type: plain curl -d, text/plain or none', async () => {
      const body = JSON.stringify({ scope: 'team:Acme/web', guarantee: { gpus: 2 } });
      for (const type of ['application/x-www-form-urlencoded', 'text/plain']) {
        assert.deepEqual(await put(body, { 'content-type': type }), {
          status: 200,
          body: { scope: `team:${ids.web}` },
        });
      }
      const untyped = await fetch(`${stack.url}/api/v1/quotas`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${stack.adminToken}` },
        body: new TextEncoder().encode(body),
      });
      assert.deepEqual(
        { status: untyped.status, body: await untyped.json() },
        { status: 200, body: { scope: `team:${ids.web}` } },
      );
    });

    it('400 "the request is not valid JSON: ..." for a body that is not JSON', async () => {
      // The words after the colon are the parser's, and llmgw's parser is not Go's (the original said
      // "EOF", "unexpected EOF" or "invalid character ..."): only the sentence up to them is the same.
      for (const body of ['', '{"scope": "team:Acme/ml",', 'scope=team:Acme/ml&limit=1', "{'scope': 1}"]) {
        const answer = await put(body, { 'content-type': 'application/x-www-form-urlencoded' });
        assertError(answer, 400, /^the request is not valid JSON: \S/);
      }
    });

    it('400 with the resolution sentence for a scope that does not resolve', async () => {
      for (const [scope, sentence] of SCOPE_ERRORS) {
        assertError(await put({ scope, limit: { gpus: 1 } }), 400, sentence);
      }
    });

    it('a missing or empty scope is a scope that does not resolve: "" is not org:NAME, ...', async () => {
      for (const body of [{}, { limit: { gpus: 1 } }, { scope: '', guarantee: { gpus: 1 } }]) {
        assertError(await put(body), 400, `"" ${NOT_A_SCOPE}`);
      }
    });

    it('an empty quota is told only once its scope resolves', async () => {
      assertError(await put({ scope: 'team:nope' }), 400, 'there is no team "nope"');
      assertError(await put({ scope: 'team:Acme/ml' }), 400, EMPTY_QUOTA);
      assertError(await put({ scope: 'team:Acme/ml', guarantee: {}, limit: {} }), 400, EMPTY_QUOTA);
    });
  });

  describe('GET /api/v1/quotas', () => {
    it('200 with every field of the original, guarantee and limit {} when unset, names as people write them', async () => {
      await ok('PUT', '/api/v1/quotas', { scope: 'org:Acme', limit: { gpus: 64 } });
      await ok('PUT', '/api/v1/quotas', {
        scope: 'team:Acme/ml',
        guarantee: { gpus: 8 },
        limit: { gpus: 16 },
      });
      await ok('PUT', '/api/v1/quotas', { scope: 'project:Acme/ml/training', guarantee: { gpus: 4 } });
      const quotas: Record<string, any>[] = await ok('GET', '/api/v1/quotas');
      for (const quota of quotas) {
        // llmgw adds what the scope borrows (POLICY.md "Guarantee: protected and borrowed") and whether
        // its models may preempt ("Priority and fair sharing among models") and its priority among its
        // siblings ("Priority nests").
        assert.deepEqual(
          Object.keys(quota).sort(),
          [...VIEW_FIELDS, 'borrowed', 'preemption', 'priority'].sort(),
          quota.scope,
        );
        assert.equal(quota.preemption, 'lower-claim', 'the default, for quotas set as the original did');
        assert.equal(quota.priority, 0, 'the default, for quotas set as the original did');
      }
      const of = (key: string) => quotas.find((quota) => quota.scope === key)!;
      assert.deepEqual(
        [of(`org:${ids.acme}`), of(`team:${ids.ml}`), of(`project:${ids.training}`)].map((q) => [
          q.name,
          q.guarantee,
          q.limit,
        ]),
        [
          ['Acme', {}, { gpus: 64 }],
          ['Acme / ml', { gpus: 8 }, { gpus: 16 }],
          ['Acme/ml/training', { gpus: 4 }, {}],
        ],
      );
      assert.equal(of(`org:${ids.acme}`).limit.gpus, 64);
      assert.equal(
        of(`org:${ids.acme}`).guarantee.gpus,
        undefined,
        'reading an unset guarantee does not throw',
      );
    });
  });

  describe('DELETE /api/v1/quotas/{scope}', () => {
    it('200 {"removed": "<kind>:<id>"}, also when the scope has no quota (idempotent)', async () => {
      await ok('PUT', '/api/v1/quotas', { scope: 'team:Acme/web', limit: { gpus: 1 } });
      assert.deepEqual(await remove('team:Acme/web'), { status: 200, body: { removed: `team:${ids.web}` } });
      assert.deepEqual(await remove('team:Acme/web'), { status: 200, body: { removed: `team:${ids.web}` } });
      assert.deepEqual(await remove(' org:Globex '), { status: 200, body: { removed: `org:${ids.globex}` } });
      const quotas: { scope: string }[] = await ok('GET', '/api/v1/quotas');
      assert.equal(
        quotas.filter((q) => q.scope === `team:${ids.web}` || q.scope === `org:${ids.globex}`).length,
        0,
      );
    });

    it('400 with the resolution sentence for a scope that does not resolve', async () => {
      for (const [scope, sentence] of SCOPE_ERRORS) assertError(await remove(scope), 400, sentence);
    });
  });

  describe('POST /api/v1/models/{name}/owner', () => {
    it('200 {"model", "owner": "<kind>:<id>"}; "" or no owner clears it and answers "owner": ""', async () => {
      assert.deepEqual(await setOwner({ owner: 'team:Acme/web' }), {
        status: 200,
        body: { model: chat, owner: `team:${ids.web}` },
      });
      assert.deepEqual(await setOwner({ owner: '' }), { status: 200, body: { model: chat, owner: '' } });
      await ok('POST', `/api/v1/models/${chat}/owner`, { owner: 'team:Acme/web' });
      assert.deepEqual(await setOwner({}), { status: 200, body: { model: chat, owner: '' } });
    });

    it('400 "the request is not valid JSON: ..." and the resolution sentences', async () => {
      assertError(await setOwner('owner=team:Acme/ml'), 400, /^the request is not valid JSON: \S/);
      for (const [owner, sentence] of SCOPE_ERRORS) assertError(await setOwner({ owner }), 400, sentence);
    });
  });

  describe('where llmgw answers otherwise on purpose (API.md)', () => {
    it('an unreachable store: 503 naming it (the original: 500 or 400 with the driver error; 501 with no store)', async () => {
      // A real client of a store nobody listens to: every query fails to connect.
      const down = connect('postgres://llmgw@127.0.0.1:1/llmgw', { max: 1 });
      const app = createApp({
        sql: down,
        reconcilers: idleReconcilers,
        temporalReachable: async () => true,
        policy: stack.config.policy,
      });
      const requests: [string, string, unknown?][] = [
        ['GET', '/api/v1/quotas'],
        ['PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', limit: { gpus: 1 } }],
        ['DELETE', '/api/v1/quotas/team%3AAcme%2Fml'],
        ['POST', `/api/v1/models/${chat}/owner`, { owner: '' }],
      ];
      for (const [method, path, body] of requests) {
        const response = await app.request(path, {
          method,
          headers: { authorization: `Bearer ${stack.adminToken}` },
          ...(body ? { body: JSON.stringify(body) } : {}),
        });
        const answer: Answer = { status: response.status, body: await response.json() };
        assertError(answer, 503, 'the store (Postgres) is unreachable; try again shortly');
      }
      await down.end();
    });

    it('a body above its bound: 413 (the original cut it there and answered "not valid JSON: unexpected EOF")', async () => {
      const pad = (kib: number) => 'x'.repeat(kib * 1024);
      assertError(await put({ scope: 'team:Acme/ml', limit: { gpus: 1 }, pad: pad(17) }), 413, /16 KiB/);
      assertError(await setOwner({ owner: 'team:Acme/ml', pad: pad(5) }), 413, /4 KiB/);
    });

    it('an unknown model: 404 (the original: 400 with the store’s sentence)', async () => {
      assertError(
        await setOwner({ owner: 'team:Acme/ml' }, `ghost-${chat}`),
        404,
        `there is no model "ghost-${chat}"`,
      );
    });

    it('a body of the wrong shape: one sentence naming the field, checked before the scope resolves', async () => {
      // The original ignored unknown fields, took null as unset and said "the request is not valid JSON:
      // json: cannot unmarshal ..." for a wrong type; its store then checked the values.
      const refusals: [unknown, string][] = [
        [{ scope: 'team:Acme/ml', limits: { gpus: 1 } }, 'unknown field "limits"'],
        [{ scope: 5, limit: { gpus: 1 } }, 'scope must be a string'],
        [{ scope: 'team:Acme/ml', guarantee: null, limit: { gpus: 1 } }, 'guarantee must be an object'],
        [{ scope: 'team:nope', limit: { gpus: -1 } }, 'limit.gpus must not be negative'],
        [{ scope: 'team:Acme/ml', limit: { gpus: 1.5 } }, 'limit.gpus must be a whole number'],
      ];
      for (const [body, sentence] of refusals) assertError(await put(body), 400, sentence);
      assertError(
        await put({ scope: 'team:Acme/ml', guarantee: { gpus: 8 }, limit: { gpus: 4 } }),
        400,
        'the guarantee of 8 GPUs is above the limit of 4 GPUs',
      );
    });
  });
});
