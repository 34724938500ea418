// The quota endpoints of API.md ("Conventions", "Quotas") against a real Postgres: how scopes are
// named, every refusal and its sentence, body bounds, that a failed request changes nothing, that
// concurrent PUTs leave one whole quota, and holds/borrowed summed up the tree (POLICY.md).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Resources } from '../../src/domain/resources.ts';
import { newId } from '../../src/store/ids.ts';
import { assertError } from '../support/assertions.ts';
import { type Answer, type Stack, startStack } from '../support/stack.ts';

const MALFORMED = 'is not org:NAME, team:ORG/TEAM or project:ORG/TEAM/PROJECT';

describe('quotas API', () => {
  let stack: Stack;
  // Model names reach Temporal workflow IDs, which outlive this file's stack: keep them unique.
  const tag = newId().slice(0, 6);

  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  /** Headers that act as a new admin token of this name (updated_by is the token's name). */
  const as = async (name: string) => ({
    authorization: `Bearer ${await stack.token({ name, role: 'admin' })}`,
  });
  const org = async (name: string) => {
    const answer = await stack.call('POST', '/api/v1/orgs', { name });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    return answer.body as { id: string; name: string };
  };
  const team = async (orgName: string, name: string) => {
    const answer = await stack.call('POST', '/api/v1/teams', { org: orgName, name });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    return answer.body as { id: string; org_id: string; name: string; path: string };
  };
  const project = async (teamPath: string, name: string) => {
    const answer = await stack.call('POST', '/api/v1/projects', { team: teamPath, name });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    return answer.body as { id: string; team_id: string; name: string; path: string };
  };
  const model = async (name: string, owner?: string) => {
    const answer = await stack.call('PUT', `/api/v1/models/${name}`, {
      ...(owner ? { owner } : {}),
      max_replicas: 8,
      profiles: [{ name: 'gpu', resources: { gpus: 1 } }],
    });
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
  };
  /** A replica row as the worker would write it; `second` orders them (oldest first). */
  const replica = async (
    id: string,
    modelName: string,
    resources: Resources,
    second: number,
    state = 'ready',
  ) => {
    const createdAt = new Date(Date.UTC(2024, 0, 1, 0, 0, second));
    await stack.sql`
      insert into replicas (id, model, profile, node, resources, state, created_at)
      values (${id}, ${modelName}, 'gpu', 'node-1', ${stack.sql.json(resources)}, ${state}, ${createdAt})`;
  };
  const quotas = async () => {
    const answer = await stack.call('GET', '/api/v1/quotas');
    assert.equal(answer.status, 200);
    return answer.body as any[];
  };
  const quotaOf = async (scope: string) => (await quotas()).find((quota) => quota.scope === scope);
  const put = (body: unknown, headers?: Record<string, string>) =>
    stack.call('PUT', '/api/v1/quotas', body, headers);

  describe('scope names', () => {
    let acmeMl: string;
    let acmeVision: string;
    let training: string;
    let acmeOrg: string;

    before(async () => {
      acmeOrg = (await org('Acme')).id;
      acmeMl = (await team('Acme', 'ml')).id;
      acmeVision = (await team('Acme', 'vision')).id;
      await org('Globex');
      await team('Globex', 'ml');
      training = (await project('Acme/vision', 'training')).id;
    });

    it('resolves a team by its ID (team:<id>)', async () => {
      const answer = await put({ scope: `team:${acmeMl}`, limit: { gpus: 1 } });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual(answer.body, { scope: `team:${acmeMl}` });
    });

    it('resolves a team by its full path (team:Acme/ml)', async () => {
      const answer = await put({ scope: 'team:Acme/ml', limit: { gpus: 2 } });
      assert.deepEqual(answer, { status: 200, body: { scope: `team:${acmeMl}` } });
      assert.deepEqual((await quotaOf(`team:${acmeMl}`)).limit, { gpus: 2 });
    });

    it('ignores case and spaces around "/" (team:acme / ML)', async () => {
      const answer = await put({ scope: 'team:acme / ML', limit: { gpus: 3 } });
      assert.deepEqual(answer, { status: 200, body: { scope: `team:${acmeMl}` } });
      assert.deepEqual((await quotaOf(`team:${acmeMl}`)).limit, { gpus: 3 });
    });

    it('resolves the last segment alone where it is unique (team:vision)', async () => {
      const answer = await put({ scope: 'team:vision', limit: { gpus: 4 } });
      assert.deepEqual(answer, { status: 200, body: { scope: `team:${acmeVision}` } });
    });

    it('resolves an org by name and a project by its path or trailing segments', async () => {
      assert.deepEqual(await put({ scope: 'org:acme', limit: { gpus: 100 } }), {
        status: 200,
        body: { scope: `org:${acmeOrg}` },
      });
      assert.deepEqual(await put({ scope: 'project:Acme/vision/training', limit: { cores: 8 } }), {
        status: 200,
        body: { scope: `project:${training}` },
      });
      assert.deepEqual(await put({ scope: 'project:VISION/Training', limit: { cores: 9 } }), {
        status: 200,
        body: { scope: `project:${training}` },
      });
      assert.deepEqual(await put({ scope: `project:${training}`, limit: { cores: 10 } }), {
        status: 200,
        body: { scope: `project:${training}` },
      });
      assert.deepEqual((await quotaOf(`project:${training}`)).limit, { cores: 10 });
    });

    it('refuses a name that could mean two scopes: "ml" could be any of 2 teams; give its ID', async () => {
      assertError(
        await put({ scope: 'team:ml', limit: { gpus: 1 } }),
        400,
        '"ml" could be any of 2 teams; give its ID',
      );
    });

    it('refuses a missing scope: there is no team "x"', async () => {
      assertError(await put({ scope: 'team:x', limit: { gpus: 1 } }), 400, 'there is no team "x"');
      assertError(
        await put({ scope: 'project:Acme/vision/nothing', limit: { gpus: 1 } }),
        400,
        'there is no project "Acme/vision/nothing"',
      );
      // A path of the right depth under another team is not found either.
      assertError(
        await put({ scope: 'team:Globex/vision', limit: { gpus: 1 } }),
        400,
        'there is no team "Globex/vision"',
      );
      // Nor is a path of the wrong depth, as in the original API (not "malformed").
      for (const [text, what] of [
        ['team:Acme/ml/extra', 'team "Acme/ml/extra"'],
        ['team:Acme//ml', 'team "Acme//ml"'],
        ['org:Acme/ml', 'org "Acme/ml"'],
      ]) {
        assertError(await put({ scope: text, limit: { gpus: 1 } }), 400, `there is no ${what}`);
      }
    });

    it('trims the spaces around a scope, as the original API did', async () => {
      const answer = await put({ scope: '  team:Acme/ml\t', limit: { gpus: 2 } });
      assert.deepEqual(answer, { status: 200, body: { scope: `team:${acmeMl}` } });
    });

    it('refuses a malformed scope: "x" is not org:NAME, team:ORG/TEAM or project:ORG/TEAM/PROJECT', async () => {
      assertError(await put({ scope: 'x', limit: { gpus: 1 } }), 400, `"x" ${MALFORMED}`);
      for (const text of ['team:', 'galaxy:Acme', 'Acme/ml']) {
        assertError(await put({ scope: text, limit: { gpus: 1 } }), 400, `"${text}" ${MALFORMED}`);
      }
    });
  });

  describe('refusals', () => {
    let scope: string;
    before(async () => {
      await org('Refuse');
      scope = `team:${(await team('Refuse', 'checks')).id}`;
    });

    it('answers 400 "the request is not valid JSON: ..." for a body that is not JSON', async () => {
      assertError(await put('{"scope": "team:Refuse/checks",'), 400, /^the request is not valid JSON: /);
      assertError(await put(''), 400, /^the request is not valid JSON: /);
    });

    it('reads a JSON body whatever its Content-Type, as the original API did (plain curl -d)', async () => {
      for (const [gpus, type] of [
        [1, 'text/plain'],
        [2, 'application/x-www-form-urlencoded'],
        [3, 'application/json; charset=utf-8'],
      ] as const) {
        const ok = await put(JSON.stringify({ scope, limit: { gpus } }), { 'content-type': type });
        assert.deepEqual(ok, { status: 200, body: { scope } }, type);
        assert.deepEqual((await quotaOf(scope)).limit, { gpus });
      }
      assertError(
        await put('scope=team:Refuse/checks', { 'content-type': 'application/x-www-form-urlencoded' }),
        400,
        /^the request is not valid JSON: /,
      );
    });

    it('refuses a quota with neither a guarantee nor a limit', async () => {
      const message = 'a quota needs a guarantee or a limit; to remove one, DELETE it';
      assertError(await put({ scope }), 400, message);
      assertError(await put({ scope, guarantee: {}, limit: {} }), 400, message);
      assertError(await put({ scope, guarantee: {} }), 400, message);
    });

    it('takes a limit of 0 on a dimension: it sets that dimension (e.g. no GPUs for this team)', async () => {
      const answer = await put({ scope, limit: { gpus: 0 } });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      assert.deepEqual((await quotaOf(scope)).limit, { gpus: 0 });
    });

    it('refuses a guarantee above the limit on a dimension', async () => {
      assertError(
        await put({ scope, guarantee: { gpus: 8 }, limit: { gpus: 4 } }),
        400,
        'the guarantee of 8 GPUs is above the limit of 4 GPUs',
      );
      assertError(
        await put({ scope, guarantee: { gpus: 2, memory_gib: 600 }, limit: { gpus: 4, memory_gib: 512 } }),
        400,
        /guarantee of 600 GiB is above the limit of 512 GiB/,
      );
      assertError(
        await put({ scope, guarantee: { gpus: 2 }, limit: { gpus: 0 } }),
        400,
        'the guarantee of 2 GPUs is above the limit of 0 GPUs',
      );
      // Equal is fine, and a dimension the limit does not set bounds nothing.
      assert.equal((await put({ scope, guarantee: { gpus: 4, cores: 99 }, limit: { gpus: 4 } })).status, 200);
    });

    it('refuses negative values', async () => {
      assertError(await put({ scope, guarantee: { gpus: -1 } }), 400, 'guarantee.gpus must not be negative');
      assertError(
        await put({ scope, limit: { memory_gib: -0.5 } }),
        400,
        'limit.memory_gib must not be negative',
      );
    });

    it('refuses fractional GPUs (fractional cores are fine)', async () => {
      assertError(await put({ scope, limit: { gpus: 1.5 } }), 400, 'limit.gpus must be a whole number');
      assert.equal((await put({ scope, limit: { cores: 1.5 } })).status, 200);
    });

    it('refuses values that are not numbers', async () => {
      assertError(await put({ scope, limit: { gpus: '8' } }), 400, 'limit.gpus must be a number');
      assertError(await put({ scope, guarantee: { cores: null } }), 400, 'guarantee.cores must be a number');
      assertError(await put({ scope, guarantee: 8 }), 400, /^guarantee must be an? /);
      assertError(await put({ scope: 42, limit: { gpus: 1 } }), 400, /^scope must be a string/);
    });

    it('refuses values that are not finite (1e400 parses to Infinity)', async () => {
      const answer = await put(`{"scope": "${scope}", "limit": {"gpus": 1e400}}`);
      assertError(answer, 400, /^limit\.gpus must be a (finite )?number$/);
      assertError(
        await put(`{"scope": "${scope}", "guarantee": {"cores": -1e400}}`),
        400,
        /^guarantee\.cores must/,
      );
    });

    it('refuses unknown fields, at the top and inside resources', async () => {
      assertError(await put({ scope, limit: { gpus: 1 }, owner: 'x' }), 400, 'unknown field "owner"');
      assertError(await put({ scope, limit: { gpu: 1 } }), 400, 'unknown field "gpu" in limit');
    });

    it('answers a missing scope with the resolution sentence, as the original API did', async () => {
      assertError(await put({ limit: { gpus: 1 } }), 400, `"" ${MALFORMED}`);
      assertError(await put({ scope: '', limit: { gpus: 1 } }), 400, `"" ${MALFORMED}`);
    });

    it('resolves the scope before it looks at an empty quota, as the original API did', async () => {
      assertError(await put({ scope: 'team:Refuse/none' }), 400, 'there is no team "Refuse/none"');
      assertError(await put({}), 400, `"" ${MALFORMED}`);
    });

    it('answers 413 for a body above 16 KiB, and looks at one just below', async () => {
      const big = { scope, limit: { gpus: 1 }, pad: 'x'.repeat(17 * 1024) };
      assertError(await put(big), 413, /larger than 16 KiB/);
      // Just under the bound the body is read (and refused for its unknown field, not its size).
      const small = { scope, limit: { gpus: 1 }, pad: 'x'.repeat(15 * 1024) };
      assertError(await put(small), 400, 'unknown field "pad"');
      assertError(await stack.call('POST', '/api/v1/quotas/preview', big), 413);
    });
  });

  it('lists quotas with their display name, holds, borrowed, updated_by and updated_at', async () => {
    const o = await org('Listing');
    const t = await team('Listing', 'ml');
    const p = await project('Listing/ml', 'training');
    const headers = await as('alice@example.com');
    assert.equal((await put({ scope: 'org:Listing', limit: { gpus: 64 } }, headers)).status, 200);
    assert.equal(
      (await put({ scope: 'team:Listing/ml', guarantee: { gpus: 8 }, limit: { gpus: 16 } })).status,
      200,
    );
    assert.equal(
      (await put({ scope: 'project:Listing/ml/training', guarantee: { cores: 4.5 } })).status,
      200,
    );

    const orgQuota = await quotaOf(`org:${o.id}`);
    assert.equal(orgQuota.name, 'Listing');
    assert.equal(orgQuota.updated_by, 'alice@example.com');
    assert.deepEqual(orgQuota.limit, { gpus: 64 });
    assert.deepEqual(orgQuota.guarantee, {}, 'unset: {}, so that clients read q.guarantee.gpus');

    const teamQuota = await quotaOf(`team:${t.id}`);
    assert.deepEqual(teamQuota, {
      scope: `team:${t.id}`,
      name: 'Listing / ml',
      guarantee: { gpus: 8 },
      limit: { gpus: 16 },
      preemption: 'lower-claim',
      priority: 0,
      holds: { gpus: 0, cores: 0, memory_gib: 0 },
      borrowed: { gpus: 0, cores: 0, memory_gib: 0 },
      updated_by: 'bootstrap',
      updated_at: teamQuota.updated_at,
    });
    assert.match(teamQuota.updated_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.ok(Math.abs(Date.parse(teamQuota.updated_at) - Date.now()) < 60_000, teamQuota.updated_at);

    const projectQuota = await quotaOf(`project:${p.id}`);
    assert.equal(projectQuota.name, 'Listing/ml/training');
    assert.deepEqual(projectQuota.guarantee, { cores: 4.5 });
    assert.deepEqual(projectQuota.limit, {});
  });

  it('replaces the whole quota on PUT (a dimension or part not given is gone)', async () => {
    await org('Replace');
    const t = await team('Replace', 'ml');
    await put({
      scope: 'team:Replace/ml',
      guarantee: { gpus: 2, cores: 8 },
      limit: { gpus: 4, memory_gib: 64 },
    });
    await put({ scope: 'team:Replace/ml', limit: { cores: 16 } }, await as('bob'));
    const quota = await quotaOf(`team:${t.id}`);
    assert.deepEqual(quota.guarantee, {}, JSON.stringify(quota));
    assert.deepEqual(quota.limit, { cores: 16 });
    assert.equal(quota.updated_by, 'bob');
    // Empty parts count as absent: a guarantee of {} next to a limit stores no guarantee.
    await put({ scope: 'team:Replace/ml', guarantee: {}, limit: { gpus: 1 } });
    const again = await quotaOf(`team:${t.id}`);
    assert.deepEqual(again.guarantee, {}, JSON.stringify(again));
    assert.deepEqual(again.limit, { gpus: 1 });
  });

  it('preemption: "never" is stored and shown; left out, the whole quota is replaced and it is "lower-claim"', async () => {
    await org('Preempt');
    const t = await team('Preempt', 'batch');
    const scope = `team:${t.id}`;
    const stored = async () =>
      (await stack.sql`select preemption from capacity_quotas where scope = ${scope}`)[0].preemption;
    assert.equal((await put({ scope, limit: { gpus: 8 }, preemption: 'never' })).status, 200);
    assert.equal((await quotaOf(scope)).preemption, 'never');
    const one = await stack.call('GET', `/api/v1/quotas/${encodeURIComponent(scope)}`);
    assert.equal(one.body.preemption, 'never');
    assert.equal((await put({ scope, limit: { gpus: 8 } })).status, 200);
    assert.equal((await quotaOf(scope)).preemption, 'lower-claim');
    assert.equal(await stored(), null, 'the default is stored as null');
    assert.equal((await put({ scope, limit: { gpus: 8 }, preemption: 'lower-claim' })).status, 200);
    assert.equal((await quotaOf(scope)).preemption, 'lower-claim');
    assert.equal(await stored(), null, 'however it was given');
    const preview = await stack.call('POST', '/api/v1/quotas/preview', {
      scope,
      limit: { gpus: 8 },
      preemption: 'never',
    });
    assert.equal(preview.status, 200, JSON.stringify(preview.body));
    assert.equal((await quotaOf(scope)).preemption, 'lower-claim', 'a preview changes nothing');
    // Turning preemption off is a quota of its own; saying only the default is saying nothing.
    assert.equal((await put({ scope, preemption: 'never' })).status, 200);
    assert.equal((await quotaOf(scope)).preemption, 'never');
    assert.equal((await put({ scope, preemption: 'lower-claim' })).status, 400);
  });

  it('refuses a preemption other than "never" or "lower-claim", and a quota of the default preemption alone', async () => {
    await org('PreemptBad');
    const t = await team('PreemptBad', 'ml');
    const scope = `team:${t.id}`;
    assert.equal((await put({ scope, limit: { gpus: 2 }, preemption: 'never' })).status, 200);
    const before = await quotaOf(scope);
    const sentence = 'preemption must be "never" or "lower-claim"';
    for (const preemption of ['always', 'Never', '', 5, null]) {
      assertError(await put({ scope, limit: { gpus: 4 }, preemption }), 400, sentence);
    }
    assertError(
      await put({ scope, preemption: 'lower-claim' }),
      400,
      'a quota needs a guarantee or a limit; to remove one, DELETE it',
    );
    assert.deepEqual(await quotaOf(scope), before);
    await assert.rejects(
      stack.sql`update capacity_quotas set preemption = 'sometimes' where scope = ${scope}`,
      /capacity_quotas_preemption_check/,
    );
  });

  it('priority (POLICY.md "Priority nests"): stored, shown, replaced with the quota, a quota of its own; bounded like a model\'s', async () => {
    await org('Prio');
    const t = await team('Prio', 'ml');
    const scope = `team:${t.id}`;
    const stored = async () =>
      (await stack.sql`select priority from capacity_quotas where scope = ${scope}`)[0].priority;
    assert.equal((await put({ scope, limit: { gpus: 8 }, priority: 3 })).status, 200);
    assert.equal((await quotaOf(scope)).priority, 3);
    const tree = await stack.call('GET', '/api/v1/tree');
    const node = (
      tree.body as { scope: string; children: { scope: string; quota: { priority: number } }[] }[]
    )
      .flatMap((o) => o.children)
      .find((n) => n.scope === scope);
    assert.equal(node?.quota.priority, 3, 'the tree shows it');
    assert.equal((await put({ scope, limit: { gpus: 8 } })).status, 200);
    assert.equal((await quotaOf(scope)).priority, 0, 'left out, the whole quota is replaced');
    assert.equal(await stored(), 0);
    // A priority alone says something; a priority of 0 alone says nothing.
    assert.equal((await put({ scope, priority: -2 })).status, 200);
    assert.equal((await quotaOf(scope)).priority, -2);
    assertError(
      await put({ scope, priority: 0 }),
      400,
      'a quota needs a guarantee or a limit; to remove one, DELETE it',
    );
    const range = 'priority must be between -1000000 and 1000000';
    for (const priority of [1_000_001, -1_000_001]) assertError(await put({ scope, priority }), 400, range);
    for (const priority of [1.5, '3', null]) assert.equal((await put({ scope, priority })).status, 400);
    await assert.rejects(
      stack.sql`update capacity_quotas set priority = 2000000 where scope = ${scope}`,
      /capacity_quotas_priority_range/,
    );
  });

  it("an org's operator orders its teams; a team's operator cannot set its own team's priority", async () => {
    await org('Order');
    const a = await team('Order', 'a');
    await team('Order', 'b');
    const orgOperator = {
      authorization: `Bearer ${await stack.token({ name: 'order-op', role: 'operator', scope: 'org:Order' })}`,
    };
    const teamOperator = {
      authorization: `Bearer ${await stack.token({ name: 'a-op', role: 'operator', scope: `team:${a.id}` })}`,
    };
    const byOrg = await stack.call(
      'PUT',
      '/api/v1/quotas',
      { scope: 'team:Order/a', priority: 5 },
      orgOperator,
    );
    assert.equal(byOrg.status, 200, JSON.stringify(byOrg.body));
    const preview = await stack.call(
      'POST',
      '/api/v1/quotas/preview',
      { scope: 'team:Order/b', priority: 1 },
      orgOperator,
    );
    assert.equal(preview.status, 200, JSON.stringify(preview.body));
    assert.deepEqual(preview.body.priority, {
      value: 1,
      above: ['team Order / a (5)'],
      equal: [],
      below: [],
    });
    const own = await stack.call(
      'PUT',
      '/api/v1/quotas',
      { scope: 'team:Order/a', priority: 1_000_000 },
      teamOperator,
    );
    assert.equal(own.status, 403, JSON.stringify(own.body));
    const orgs = await stack.call('PUT', '/api/v1/quotas', { scope: 'org:Order', priority: 1 }, orgOperator);
    assert.equal(orgs.status, 403, 'only an admin orders orgs');
    assert.equal((await quotaOf(`team:${a.id}`)).priority, 5);
  });

  it('DELETE /api/v1/quotas/{scope} takes a URL-encoded path scope, and is idempotent', async () => {
    await org('Remove');
    const t = await team('Remove', 'ml');
    await put({ scope: `team:${t.id}`, limit: { gpus: 4 } });
    const removed = await stack.call('DELETE', '/api/v1/quotas/team%3ARemove%2Fml');
    assert.deepEqual(removed, { status: 200, body: { removed: `team:${t.id}` } });
    assert.equal(await quotaOf(`team:${t.id}`), undefined);
    const audited = await stack.sql`select count(*)::int as n from audit_log`;
    // As in the original: none left to remove is still 200, and changes (and records) nothing.
    assert.deepEqual(await stack.call('DELETE', '/api/v1/quotas/team%3ARemove%2Fml'), removed);
    assert.deepEqual(await stack.sql`select count(*)::int as n from audit_log`, audited);
    // By ID, and with the spaces and case people type.
    await put({ scope: `team:${t.id}`, limit: { gpus: 4 } });
    const spaced = await stack.call('DELETE', `/api/v1/quotas/${encodeURIComponent('team:remove / ML')}`);
    assert.deepEqual(spaced, { status: 200, body: { removed: `team:${t.id}` } });
    await put({ scope: `team:${t.id}`, limit: { gpus: 4 } });
    assert.equal((await stack.call('DELETE', `/api/v1/quotas/team:${t.id}`)).status, 200);
    assertError(
      await stack.call('DELETE', '/api/v1/quotas/team%3ANoSuch%2Fteam'),
      400,
      'there is no team "NoSuch/team"',
    );
    assertError(await stack.call('DELETE', '/api/v1/quotas/nonsense'), 400, `"nonsense" ${MALFORMED}`);
  });

  it('GET /api/v1/quotas/{scope} answers one quota as the list shows it', async () => {
    const o = await org('Single');
    const t = await team('Single', 'ml');
    await team('Single', 'web');
    await put({ scope: 'org:Single', limit: { gpus: 32 } });
    await put({ scope: 'team:Single/ml', guarantee: { gpus: 4 } });
    const one = await stack.call('GET', `/api/v1/quotas/${encodeURIComponent(' team:single / ML ')}`);
    assert.deepEqual(one, { status: 200, body: await quotaOf(`team:${t.id}`) });
    assert.deepEqual(one.body.limit, {});
    assert.equal((await stack.call('GET', `/api/v1/quotas/org:${o.id}`)).body.name, 'Single');

    assertError(
      await stack.call('GET', '/api/v1/quotas/team%3ASingle%2Fweb'),
      404,
      'team Single / web has no quota',
    );
    assertError(
      await stack.call('GET', '/api/v1/quotas/team%3ASingle%2Fno'),
      400,
      'there is no team "Single/no"',
    );
    assertError(await stack.call('GET', '/api/v1/quotas/Single'), 400, `"Single" ${MALFORMED}`);
    // An operator of the team sees its own quota; the org's, which its list leaves out, is not shown either.
    const operator = {
      authorization: `Bearer ${await stack.token({ name: `op-${tag}`, role: 'operator', scope: 'team:Single/ml' })}`,
    };
    const own = await stack.call('GET', '/api/v1/quotas/team%3ASingle%2Fml', undefined, operator);
    assert.equal(own.status, 200, JSON.stringify(own.body));
    assertError(
      await stack.call('GET', '/api/v1/quotas/org%3ASingle', undefined, operator),
      404,
      'org Single has no quota',
    );
    assertError(
      await stack.call('GET', '/api/v1/quotas/team%3ASingle%2Fweb', undefined, operator),
      400,
      'there is no team "Single/web"',
    );
  });

  it('a failed request changes nothing', async () => {
    await org('Unchanged');
    const t = await team('Unchanged', 'ml');
    await put({ scope: `team:${t.id}`, guarantee: { gpus: 2 }, limit: { gpus: 4 } }, await as('carol'));
    const before = await quotas();
    const tree = (await stack.call('GET', '/api/v1/tree')).body;
    const scope = 'team:Unchanged/ml';
    const failures: Answer[] = [
      await put({ scope, guarantee: { gpus: 8 }, limit: { gpus: 4 } }),
      await put({ scope, limit: { gpus: -1 } }),
      await put({ scope, limit: { gpus: 1.5 } }),
      await put({ scope, limit: { gpus: 1 }, extra: true }),
      await put({ scope, limit: { gpus: 4 }, preemption: 'always' }),
      await put({ scope, limit: { gpus: 1 }, pad: 'x'.repeat(20 * 1024) }),
      await put(`{"scope": "${scope}", "limit": {"gpus": 1}`),
      await put('scope=team:Unchanged/ml', { 'content-type': 'application/x-www-form-urlencoded' }),
      await put({ scope }),
      await put({ scope: 'team:Unchanged/nope', limit: { gpus: 1 } }),
      await put({ scope: 'org:Unchanged', limit: { gpus: 1 }, guarantee: { gpus: 2 } }),
      await stack.call('DELETE', '/api/v1/quotas/team%3AUnchanged%2Fnope'),
    ];
    for (const failure of failures)
      assert.ok(failure.status >= 400 && failure.status < 500, JSON.stringify(failure));
    // Removing the quota an org does not have succeeds, and changes nothing either.
    assert.equal((await stack.call('DELETE', '/api/v1/quotas/org%3AUnchanged')).status, 200);
    assert.deepEqual(await quotas(), before);
    assert.deepEqual((await stack.call('GET', '/api/v1/tree')).body, tree);
  });

  it('concurrent PUTs on one scope leave exactly one of them, whole', async () => {
    await org('Race');
    const t = await team('Race', 'ml');
    // Each writer's quota is recognisable on every part: its guarantee, its limit (or none) and its user.
    const bodies = Array.from({ length: 20 }, (_, i) => ({
      scope: i % 3 === 0 ? `team:${t.id}` : i % 3 === 1 ? 'team:Race/ml' : 'team:race / ML',
      guarantee: { gpus: i, cores: 100 + i },
      ...(i % 2 === 0 ? { limit: { gpus: 20 + i, memory_gib: 1000 + i } } : {}),
    }));
    const writers = await Promise.all(bodies.map((_, i) => as(`writer-${i}`)));
    const answers = await Promise.all(bodies.map((body, i) => put(body, writers[i])));
    for (const answer of answers) assert.deepEqual(answer, { status: 200, body: { scope: `team:${t.id}` } });

    const stored = await quotaOf(`team:${t.id}`);
    const i = stored.guarantee.gpus as number;
    assert.ok(Number.isInteger(i) && i >= 0 && i < 20, JSON.stringify(stored));
    assert.deepEqual(stored.guarantee, bodies[i].guarantee);
    assert.deepEqual(stored.limit, bodies[i].limit ?? {}); // an unset limit shows as {}
    assert.equal(stored.updated_by, `writer-${i}`);
    const [{ count }] =
      await stack.sql`select count(*)::int as count from capacity_quotas where scope = ${`team:${t.id}`}`;
    assert.equal(count, 1);
  });

  describe('holds and borrowed are summed up the tree', () => {
    /**
     * Org > team (guarantee 4 GPUs) > projects a and b, each owning a model. Oldest first (POLICY.md
     * "Guarantee"): r0 is stopped (holds nothing); r1 a 2 GPUs taken (2); r2 b 3 GPUs would make 5, so
     * borrowed; r3 b 2 GPUs (draining still holds) taken (4); r4 a 1 GPU would make 5, borrowed; r5 a
     * CPU-only uses no dimension the guarantee sets, borrowed; r6 has no owner and counts nowhere.
     */
    const scenario = async (name: string) => {
      const o = await org(name);
      const t = await team(name, 'ml');
      const a = await project(`${name}/ml`, 'a');
      const b = await project(`${name}/ml`, 'b');
      const [ma, mb, mu] = [`${name}-a-${tag}`, `${name}-b-${tag}`, `${name}-u-${tag}`].map((n) =>
        n.toLowerCase(),
      );
      await model(ma, `project:${a.id}`);
      await model(mb, `project:${name}/ml/b`);
      await model(mu);
      assert.equal((await put({ scope: `team:${name}/ml`, guarantee: { gpus: 4 } })).status, 200);
      const r = (n: number) => `${name.toLowerCase()}-r${n}`;
      await replica(r(0), mb, { gpus: 1 }, 0, 'stopped');
      await replica(r(1), ma, { gpus: 2, memory_gib: 80 }, 1);
      await replica(r(2), mb, { gpus: 3, memory_gib: 120 }, 2);
      await replica(r(3), mb, { gpus: 2, memory_gib: 80 }, 3, 'draining');
      await replica(r(4), ma, { gpus: 1, memory_gib: 40 }, 4, 'starting');
      await replica(r(5), ma, { cores: 8, memory_gib: 16 }, 5);
      await replica(r(6), mu, { gpus: 1, memory_gib: 8 }, 6);
      return { o, t, a, b, ma, mb, mu, r };
    };

    it('with a guarantee on the team only: GET /quotas and GET /tree', async () => {
      const { o, t, a, b, ma, r } = await scenario('Holdco');

      const teamQuota = await quotaOf(`team:${t.id}`);
      assert.deepEqual(teamQuota.holds, { gpus: 8, cores: 8, memory_gib: 336 });
      assert.deepEqual(teamQuota.borrowed, { gpus: 4, cores: 8, memory_gib: 176 });
      assert.equal(await quotaOf(`org:${o.id}`), undefined, 'only scopes with a quota are listed');

      const tree = await stack.call('GET', '/api/v1/tree');
      assert.equal(tree.status, 200);
      const orgNode = tree.body.find((node: any) => node.id === o.id);
      assert.equal(orgNode.scope, `org:${o.id}`);
      assert.equal(orgNode.quota, null);
      assert.deepEqual(orgNode.holds, { gpus: 8, cores: 8, memory_gib: 336 });
      assert.deepEqual(orgNode.borrowed, { gpus: 4, cores: 8, memory_gib: 176 });
      assert.equal(orgNode.children.length, 1);
      const teamNode = orgNode.children[0];
      assert.equal(teamNode.scope, `team:${t.id}`);
      assert.equal(teamNode.path, 'Holdco/ml');
      assert.deepEqual(teamNode.quota, { guarantee: { gpus: 4 }, priority: 0 });
      assert.deepEqual(teamNode.holds, { gpus: 8, cores: 8, memory_gib: 336 });
      assert.deepEqual(teamNode.borrowed, { gpus: 4, cores: 8, memory_gib: 176 });
      const byId = new Map(teamNode.children.map((node: any) => [node.id, node]));
      assert.equal(byId.size, 2);
      const nodeA = byId.get(a.id) as any;
      const nodeB = byId.get(b.id) as any;
      assert.equal(nodeA.path, 'Holdco/ml/a');
      assert.equal(nodeA.quota, null);
      assert.deepEqual(nodeA.holds, { gpus: 3, cores: 8, memory_gib: 136 });
      assert.deepEqual(nodeA.borrowed, { gpus: 1, cores: 8, memory_gib: 56 });
      assert.deepEqual(nodeB.holds, { gpus: 5, cores: 0, memory_gib: 200 });
      assert.deepEqual(nodeB.borrowed, { gpus: 3, cores: 0, memory_gib: 120 });
      assert.deepEqual(nodeA.children, []);

      // The same walk marks each replica protected or not.
      const replicas = await stack.call('GET', '/api/v1/replicas');
      const flags = Object.fromEntries(
        replicas.body.filter((x: any) => x.id.startsWith('holdco-')).map((x: any) => [x.id, x.protected]),
      );
      assert.deepEqual(flags, {
        [r(0)]: false,
        [r(1)]: true,
        [r(2)]: false,
        [r(3)]: true,
        [r(4)]: false,
        [r(5)]: false,
        [r(6)]: false,
      });
      const models = await stack.call('GET', `/api/v1/models/${ma}`);
      assert.equal(models.body.owner, `project:${a.id}`);
    });

    it("guarantees nest: a project's guarantee protects only what its team's guarantee takes too", async () => {
      const { t, a, b } = await scenario('Layered');
      // b's own guarantee would cover r2 (3 GPUs), but the team's walk does not take r2 (2 + 3 > 4):
      // b's guarantee is carved out of the team's, so r2 stays borrowed; r3 fits both and b takes it.
      assert.equal((await put({ scope: `project:${b.id}`, guarantee: { gpus: 3 } })).status, 200);
      // a's guarantee of 1 GPU would take r4, but the team is full by then (r1 + r3): r4 stays borrowed;
      // r1 (2 GPUs, beyond a's 1) stays protected by the team.
      assert.equal((await put({ scope: `project:${a.id}`, guarantee: { gpus: 1 } })).status, 200);

      const all = await quotas();
      const get = (scope: string) => all.find((quota) => quota.scope === scope);
      assert.deepEqual(get(`project:${b.id}`).borrowed, { gpus: 3, cores: 0, memory_gib: 120 });
      assert.deepEqual(get(`project:${b.id}`).holds, { gpus: 5, cores: 0, memory_gib: 200 });
      assert.deepEqual(get(`project:${a.id}`).borrowed, { gpus: 1, cores: 8, memory_gib: 56 });
      assert.deepEqual(get(`team:${t.id}`).borrowed, { gpus: 4, cores: 8, memory_gib: 176 });
      assert.deepEqual(get(`team:${t.id}`).holds, { gpus: 8, cores: 8, memory_gib: 336 });
    });
  });

  it('POST /api/v1/quotas/preview says what would change and changes nothing', async () => {
    const o = await org('Preview');
    const t = await team('Preview', 'ml');
    const p = await project('Preview/ml', 'p');
    const m = `preview-${tag}`;
    await model(m, `project:${p.id}`);
    assert.equal((await put({ scope: `team:${t.id}`, guarantee: { gpus: 4 } })).status, 200);
    await replica('preview-r1', m, { gpus: 2 }, 1);
    await replica('preview-r2', m, { gpus: 2 }, 2);
    await replica('preview-r3', m, { gpus: 2 }, 3);
    const before = await quotas();
    const tree = (await stack.call('GET', '/api/v1/tree')).body;

    const answer = await stack.call('POST', '/api/v1/quotas/preview', {
      scope: 'team:Preview/ml',
      guarantee: { gpus: 2 },
      limit: { gpus: 6 },
    });
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    assert.equal(answer.body.scope, `team:${t.id}`);
    assert.deepEqual(answer.body.became_borrowed, ['preview-r2']);
    assert.deepEqual(answer.body.became_protected, []);
    assert.deepEqual(
      answer.body.reclaimable.map((x: any) => x.replica),
      ['preview-r2', 'preview-r3'],
    );
    assert.deepEqual(
      answer.body.blocked_models.map((x: any) => x.model),
      [m],
    );

    // A preview for a scope without a quota creates none; a refused preview answers like a PUT.
    const orgPreview = await stack.call('POST', '/api/v1/quotas/preview', {
      scope: `org:${o.id}`,
      limit: { gpus: 1 },
    });
    assert.equal(orgPreview.status, 200, JSON.stringify(orgPreview.body));
    assertError(
      await stack.call('POST', '/api/v1/quotas/preview', {
        scope: `team:${t.id}`,
        guarantee: { gpus: 3 },
        limit: { gpus: 2 },
      }),
      400,
      /above the limit/,
    );
    assertError(
      await stack.call('POST', '/api/v1/quotas/preview', { scope: 'team:Preview/none', limit: { gpus: 1 } }),
      400,
    );

    assert.deepEqual(await quotas(), before);
    assert.deepEqual((await stack.call('GET', '/api/v1/tree')).body, tree);
  });
});
