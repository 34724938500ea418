// Orgs, teams and projects (API.md "Tenancy") against a real Postgres: create, list, delete, the tree,
// how a parent is named in a body, and that a failed request changes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/store/ids.ts';
import { assertError } from '../support/assertions.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('tenancy API', () => {
  let stack: Stack;
  const tag = newId().slice(0, 6);

  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  const post = (plural: string, body: unknown, headers?: Record<string, string>) =>
    stack.call('POST', `/api/v1/${plural}`, body, headers);
  const created = async (plural: string, body: unknown) => {
    const answer = await post(plural, body);
    assert.equal(answer.status, 201, JSON.stringify(answer.body));
    return answer.body;
  };
  const list = async (plural: string) => {
    const answer = await stack.call('GET', `/api/v1/${plural}`);
    assert.equal(answer.status, 200);
    assert.ok(Array.isArray(answer.body));
    return answer.body as any[];
  };
  const everything = async () => ({
    orgs: await list('orgs'),
    teams: await list('teams'),
    projects: await list('projects'),
    tree: (await stack.call('GET', '/api/v1/tree')).body,
    quotas: (await stack.call('GET', '/api/v1/quotas')).body,
  });

  describe('orgs', () => {
    it('POST /api/v1/orgs -> 201 {id, name}; GET lists it', async () => {
      const answer = await post('orgs', { name: 'Acme' });
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      assert.deepEqual(Object.keys(answer.body).sort(), ['id', 'name']);
      assert.equal(answer.body.name, 'Acme');
      assert.match(answer.body.id, /^[a-z0-9]{6,}$/);
      assert.deepEqual(
        (await list('orgs')).find((org) => org.id === answer.body.id),
        answer.body,
      );
    });

    it('409 when the name exists (whatever its case), and nothing is added', async () => {
      await created('orgs', { name: 'Dupe Inc' });
      const before = await list('orgs');
      assertError(await post('orgs', { name: 'Dupe Inc' }), 409, /already an org named "Dupe Inc"/);
      assertError(await post('orgs', { name: 'dupe inc' }), 409);
      assert.deepEqual(await list('orgs'), before);
    });

    it('trims a name and refuses names that cannot be written in a path', async () => {
      assert.equal((await created('orgs', { name: '  Spaced Out  ' })).name, 'Spaced Out');
      for (const name of ['a/b', 'team:x', '', ' ', '-leading', 'x'.repeat(64)]) {
        assertError(await post('orgs', { name }), 400, /^name must be 1 to 63 letters/);
      }
      assertError(await post('orgs', {}), 400, 'name is required');
      assertError(await post('orgs', { name: 5 }), 400, 'name must be a string');
      assertError(await post('orgs', { name: 'Fine', id: 'mine' }), 400, 'unknown field "id"');
    });
  });

  describe('teams and projects', () => {
    let acme: { id: string };
    before(async () => {
      acme = await created('orgs', { name: 'Initech' });
      await created('orgs', { name: 'Umbrella' });
    });

    it('POST /api/v1/teams takes the bare org name -> 201 {id, org_id, name, path}', async () => {
      const answer = await post('teams', { org: 'Initech', name: 'ml' });
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      assert.deepEqual(Object.keys(answer.body).sort(), ['id', 'name', 'org_id', 'path']);
      assert.equal(answer.body.org_id, acme.id);
      assert.equal(answer.body.name, 'ml');
      assert.equal(answer.body.path, 'Initech/ml');
      assert.deepEqual(
        (await list('teams')).find((team) => team.id === answer.body.id),
        answer.body,
      );
    });

    it('takes the org as org:NAME, org:ID and in any case', async () => {
      assert.equal((await created('teams', { org: 'org:Initech', name: 'vision' })).org_id, acme.id);
      assert.equal((await created('teams', { org: `org:${acme.id}`, name: 'speech' })).org_id, acme.id);
      assert.equal((await created('teams', { org: 'INITECH', name: 'search' })).org_id, acme.id);
    });

    it('the same team name under another org is fine; among siblings it is 409', async () => {
      const other = await created('teams', { org: 'Umbrella', name: 'ml' });
      assert.equal(other.path, 'Umbrella/ml');
      const before = await list('teams');
      assertError(await post('teams', { org: 'Initech', name: 'ML' }), 409, /already a team named "ML"/);
      assert.deepEqual(await list('teams'), before);
    });

    it('refuses an org that does not resolve, or a scope of another kind', async () => {
      const before = await list('teams');
      assertError(await post('teams', { org: 'Nowhere', name: 'x1' }), 400, 'there is no org "Nowhere"');
      // A path deeper than an org's is an org that does not exist, as in the original API.
      assertError(
        await post('teams', { org: 'Initech/ml', name: 'x2' }),
        400,
        'there is no org "Initech/ml"',
      );
      assertError(
        await post('teams', { org: 'team:Initech/ml', name: 'x3' }),
        400,
        /^a team belongs to an org/,
      );
      assertError(await post('teams', { name: 'x4' }), 400, 'org is required');
      assertError(await post('teams', { org: 'Initech', name: 'a/b' }), 400, /^name must be/);
      assert.deepEqual(await list('teams'), before);
    });

    it('POST /api/v1/projects takes the team path -> 201 {id, team_id, name, path}', async () => {
      const ml = (await list('teams')).find((team) => team.path === 'Initech/ml');
      const answer = await post('projects', { team: 'Initech/ml', name: 'training' });
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      assert.deepEqual(Object.keys(answer.body).sort(), ['id', 'name', 'path', 'team_id']);
      assert.equal(answer.body.team_id, ml.id);
      assert.equal(answer.body.path, 'Initech/ml/training');
      assert.deepEqual(
        (await list('projects')).find((p) => p.id === answer.body.id),
        answer.body,
      );
      // Other ways to name the team: its key, its ID, case and spaces, the last segment where unique.
      assert.equal((await created('projects', { team: 'team:initech / ML', name: 'eval' })).team_id, ml.id);
      assert.equal((await created('projects', { team: `team:${ml.id}`, name: 'serving' })).team_id, ml.id);
      const vision = (await list('teams')).find((team) => team.path === 'Initech/vision');
      assert.equal((await created('projects', { team: 'vision', name: 'ocr' })).team_id, vision.id);
    });

    it('refuses a team name that could mean two teams, or none', async () => {
      assertError(
        await post('projects', { team: 'ml', name: 'p1' }),
        400,
        '"ml" could be any of 2 teams; give its ID',
      );
      assertError(
        await post('projects', { team: 'Initech/nope', name: 'p2' }),
        400,
        'there is no team "Initech/nope"',
      );
      assertError(
        await post('projects', { team: 'org:Initech', name: 'p3' }),
        400,
        /^a project belongs to a team/,
      );
    });

    it('the same project name under another team is fine; among siblings it is 409', async () => {
      assert.equal(
        (await created('projects', { team: 'Umbrella/ml', name: 'training' })).path,
        'Umbrella/ml/training',
      );
      assertError(
        await post('projects', { team: 'Initech/ml', name: 'Training' }),
        409,
        /already a project named/,
      );
    });
  });

  describe('body checks', () => {
    it('answers 400 "the request is not valid JSON: ..." for a body that is not JSON', async () => {
      assertError(await post('orgs', '{"name": '), 400, /^the request is not valid JSON: /);
      assertError(await post('teams', "{'org': 'x'}"), 400, /^the request is not valid JSON: /);
    });

    it('reads a JSON body whatever its Content-Type; a form is not JSON', async () => {
      const answer = await post('orgs', JSON.stringify({ name: 'TextOrg' }), {
        'content-type': 'text/plain',
      });
      assert.equal(answer.status, 201, JSON.stringify(answer.body));
      const form = await post('orgs', 'name=FormOrg', {
        'content-type': 'application/x-www-form-urlencoded',
      });
      assertError(form, 400, /^the request is not valid JSON: /);
      assert.equal(
        (await list('orgs')).find((org) => org.name === 'FormOrg'),
        undefined,
      );
    });

    it('answers 400 for a body that is JSON but not an object', async () => {
      for (const body of ['null', '[]', '"Acme"', '42']) {
        assertError(await post('orgs', body), 400, /^the body must be an? /);
      }
    });

    it('answers 413 for a body above 4 KiB', async () => {
      assertError(await post('orgs', { name: 'Big', pad: 'x'.repeat(5 * 1024) }), 413, /larger than 4 KiB/);
      assertError(await post('teams', { org: 'Initech', name: 'x'.repeat(5000) }), 413);
      assert.equal(
        (await list('orgs')).find((org) => org.name === 'Big'),
        undefined,
      );
    });
  });

  describe('DELETE', () => {
    it('refuses (409) while it has children, then deletes leaf first -> 200', async () => {
      const org = await created('orgs', { name: 'Nested' });
      const team = await created('teams', { org: 'Nested', name: 'ml' });
      const project = await created('projects', { team: 'Nested/ml', name: 'p' });
      const before = await everything();
      assertError(
        await stack.call('DELETE', `/api/v1/orgs/${org.id}`),
        409,
        `org:${org.id} still has teams; delete them first`,
      );
      assertError(
        await stack.call('DELETE', `/api/v1/teams/${team.id}`),
        409,
        `team:${team.id} still has projects; delete them first`,
      );
      assert.deepEqual(await everything(), before);

      assert.deepEqual(await stack.call('DELETE', `/api/v1/projects/${project.id}`), {
        status: 200,
        body: { removed: `project:${project.id}` },
      });
      assert.equal(
        (await list('projects')).find((p) => p.id === project.id),
        undefined,
      );
      assert.equal((await stack.call('DELETE', `/api/v1/teams/${team.id}`)).status, 200);
      assert.equal((await stack.call('DELETE', `/api/v1/orgs/${org.id}`)).status, 200);
      assert.equal(
        (await list('orgs')).find((o) => o.id === org.id),
        undefined,
      );
      // The name is free again.
      assert.equal((await post('orgs', { name: 'Nested' })).status, 201);
    });

    it('refuses (409) while it owns a model, until the owner changes', async () => {
      await created('orgs', { name: 'Owning' });
      await created('teams', { org: 'Owning', name: 'ml' });
      const project = await created('projects', { team: 'Owning/ml', name: 'p' });
      const model = `owning-${tag}`;
      const put = await stack.call('PUT', `/api/v1/models/${model}`, {
        owner: `project:${project.id}`,
        max_replicas: 1,
        profiles: [{ name: 'cpu', resources: { cores: 1 } }],
      });
      assert.equal(put.status, 201, JSON.stringify(put.body));
      assertError(
        await stack.call('DELETE', `/api/v1/projects/${project.id}`),
        409,
        `project:${project.id} still owns model "${model}"; change its owner or delete it first`,
      );
      assert.ok((await list('projects')).some((p) => p.id === project.id));
      assert.equal((await stack.call('POST', `/api/v1/models/${model}/owner`, { owner: '' })).status, 200);
      assert.equal((await stack.call('DELETE', `/api/v1/projects/${project.id}`)).status, 200);
    });

    it('refuses (409) while it has a quota, until the quota is removed', async () => {
      const org = await created('orgs', { name: 'Quoted' });
      assert.equal(
        (await stack.call('PUT', '/api/v1/quotas', { scope: 'org:Quoted', limit: { gpus: 1 } })).status,
        200,
      );
      assertError(
        await stack.call('DELETE', `/api/v1/orgs/${org.id}`),
        409,
        `org:${org.id} still has a quota; delete it first`,
      );
      assert.ok((await list('orgs')).some((o) => o.id === org.id));
      assert.equal((await stack.call('DELETE', '/api/v1/quotas/org%3AQuoted')).status, 200);
      assert.equal((await stack.call('DELETE', `/api/v1/orgs/${org.id}`)).status, 200);
    });

    it('404 for an unknown ID', async () => {
      assertError(
        await stack.call('DELETE', '/api/v1/orgs/nosuchid'),
        404,
        'there is no org with ID "nosuchid"',
      );
      assertError(
        await stack.call('DELETE', '/api/v1/teams/nosuchid'),
        404,
        'there is no team with ID "nosuchid"',
      );
      assertError(
        await stack.call('DELETE', '/api/v1/projects/nosuchid'),
        404,
        'there is no project with ID "nosuchid"',
      );
      // An ID of another kind is unknown as this kind.
      const org = await created('orgs', { name: 'Kinded' });
      assertError(await stack.call('DELETE', `/api/v1/teams/${org.id}`), 404);
      assert.ok((await list('orgs')).some((o) => o.id === org.id));
    });
  });

  it('GET /api/v1/tree nests orgs > teams > projects, each with its quota, holds and borrowed', async () => {
    const org = await created('orgs', { name: 'Treetop' });
    const ml = await created('teams', { org: 'Treetop', name: 'ml' });
    const ops = await created('teams', { org: 'Treetop', name: 'ops' });
    const p = await created('projects', { team: 'Treetop/ml', name: 'training' });
    await stack.call('PUT', '/api/v1/quotas', {
      scope: 'team:Treetop/ml',
      guarantee: { gpus: 2 },
      limit: { gpus: 4 },
    });

    const answer = await stack.call('GET', '/api/v1/tree');
    assert.equal(answer.status, 200);
    const zero = { gpus: 0, cores: 0, memory_gib: 0 };
    const node = answer.body.find((n: any) => n.id === org.id);
    assert.deepEqual(node, {
      scope: `org:${org.id}`,
      kind: 'org',
      id: org.id,
      name: 'Treetop',
      path: 'Treetop',
      quota: null,
      holds: zero,
      borrowed: zero,
      children: [
        {
          scope: `team:${ml.id}`,
          kind: 'team',
          id: ml.id,
          name: 'ml',
          path: 'Treetop/ml',
          quota: { guarantee: { gpus: 2 }, limit: { gpus: 4 }, priority: 0 },
          holds: zero,
          borrowed: zero,
          children: [
            {
              scope: `project:${p.id}`,
              kind: 'project',
              id: p.id,
              name: 'training',
              path: 'Treetop/ml/training',
              quota: null,
              holds: zero,
              borrowed: zero,
              children: [],
            },
          ],
        },
        {
          scope: `team:${ops.id}`,
          kind: 'team',
          id: ops.id,
          name: 'ops',
          path: 'Treetop/ops',
          quota: null,
          holds: zero,
          borrowed: zero,
          children: [],
        },
      ],
    });
    // Only orgs at the root.
    assert.ok(answer.body.every((n: any) => n.kind === 'org'));
  });

  describe('concurrent requests', () => {
    it('of one org name, exactly one is created and the others get 409', async () => {
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => post('orgs', { name: i % 2 ? 'Racer' : 'racer' })),
      );
      assert.deepEqual(answers.map((a) => a.status).sort(), [201, ...Array(11).fill(409)]);
      assert.equal((await list('orgs')).filter((org) => org.name.toLowerCase() === 'racer').length, 1);
    });

    it('creating under a scope or setting its quota while it is deleted: never a 500, never an orphan', async () => {
      const outcomes = new Set<string>();
      for (let i = 0; i < 15; i++) {
        const org = await created('orgs', { name: `Vanishing ${i}` });
        const [deleted, team, quota] = await Promise.all([
          stack.call('DELETE', `/api/v1/orgs/${org.id}`),
          post('teams', { org: `org:${org.id}`, name: 'ml' }),
          stack.call('PUT', '/api/v1/quotas', { scope: `org:${org.id}`, limit: { gpus: 1 } }),
        ]);
        for (const answer of [deleted, team, quota]) {
          assert.ok([200, 201, 400, 409].includes(answer.status), JSON.stringify(answer));
          if (answer.status >= 400) assertError(answer, answer.status);
        }
        outcomes.add(`${deleted.status}/${team.status}/${quota.status}`);
        const orgs = await list('orgs');
        const gone = !orgs.some((o) => o.id === org.id);
        assert.equal(gone, deleted.status === 200);
        if (gone) {
          assert.notEqual(team.status, 201);
          assert.notEqual(quota.status, 200);
        }
      }
      const orphanTeams = await stack.sql`select id from teams where org_id not in (select id from orgs)`;
      const orphanQuotas = await stack.sql`
        select scope from capacity_quotas
        where scope like 'org:%' and substr(scope, 5) not in (select id from orgs)`;
      assert.deepEqual([orphanTeams.length, orphanQuotas.length], [0, 0], [...outcomes].join(' '));
    });
  });

  it('a failed request changes nothing', async () => {
    await created('orgs', { name: 'Steady' });
    await created('teams', { org: 'Steady', name: 'ml' });
    const before = await everything();
    const failures = [
      await post('orgs', { name: 'Steady' }),
      await post('orgs', { name: 'bad/name' }),
      await post('orgs', { name: 'Other', extra: 1 }),
      await post('teams', { org: 'Steady', name: 'ml' }),
      await post('teams', { org: 'Nope', name: 'x' }),
      await post('teams', { org: 'Steady', name: 'big', pad: 'y'.repeat(8000) }),
      await post('projects', { team: 'Steady/nope', name: 'x' }),
      await post('projects', '{"team": "Steady/ml", "name": "p"'),
      await post('projects', 'team=Steady/ml&name=p', {
        'content-type': 'application/x-www-form-urlencoded',
      }),
      await stack.call('DELETE', `/api/v1/orgs/${before.orgs.find((o) => o.name === 'Steady').id}`),
      await stack.call('DELETE', '/api/v1/teams/unknown'),
    ];
    for (const failure of failures)
      assert.ok(failure.status >= 400 && failure.status < 500, JSON.stringify(failure));
    assert.deepEqual(await everything(), before);
  });
});
