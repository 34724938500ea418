// Models (API.md "Models": create/replace, list, detail, delete, owner) against a real Postgres, with
// their refusals, body bounds and that a failed request changes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Resources } from '../../src/domain/resources.ts';
import { newId } from '../../src/store/ids.ts';
import { removeModel } from '../../src/store/models.ts';
import { assertError } from '../support/assertions.ts';
import { ctl } from '../support/ctl.ts';
import { type Stack, startStack } from '../support/stack.ts';

const spec = (extra: Record<string, unknown> = {}) => ({
  min_replicas: 0,
  max_replicas: 3,
  profiles: [
    {
      name: 'h100',
      priority: 10,
      resources: { gpus: 1, memory_gib: 80 },
      gpu_model: 'H100',
      default_concurrency: 8,
    },
    {
      name: 'cpu',
      resources: { cores: 16 },
      engine: { kind: 'llama.cpp', model: '/models/chat.gguf', args: ['--ctx', '4096'] },
    },
  ],
  ...extra,
});

/** A spec as an operator may write it: its profiles name no inline engine. */
const withoutEngines = (body: ReturnType<typeof spec>) => ({
  ...body,
  profiles: body.profiles.map(({ engine: _, ...profile }: Record<string, unknown>) => profile),
});

describe('models API', () => {
  let stack: Stack;
  // Model names reach Temporal workflow IDs, which outlive this file's stack: keep them unique.
  const tag = newId().slice(0, 6);
  const name = (base: string) => `${base}-${tag}`;
  let teamId: string;
  let projectId: string;

  before(async () => {
    stack = await startStack();
    assert.equal((await stack.call('POST', '/api/v1/orgs', { name: 'Acme' })).status, 201);
    teamId = (await stack.call('POST', '/api/v1/teams', { org: 'Acme', name: 'ml' })).body.id;
    projectId = (await stack.call('POST', '/api/v1/projects', { team: 'Acme/ml', name: 'training' })).body.id;
  });
  after(() => stack.stop());

  const put = (model: string, body: unknown, headers?: Record<string, string>) =>
    stack.call('PUT', `/api/v1/models/${model}`, body, headers);
  const detail = (model: string) => stack.call('GET', `/api/v1/models/${model}`);
  const setOwner = (model: string, body: unknown, headers?: Record<string, string>) =>
    stack.call('POST', `/api/v1/models/${model}/owner`, body, headers);
  const replica = async (id: string, model: string, profile: string, resources: Resources, state: string) => {
    await stack.sql`
      insert into replicas (id, model, profile, node, resources, state, created_at)
      values (${id}, ${model}, ${profile}, 'node-1', ${stack.sql.json(resources)}, ${state}, now())`;
  };

  it('PUT /api/v1/models/{name} -> 201 when new, 200 when replaced', async () => {
    const model = name('chat');
    assert.deepEqual(await put(model, spec()), { status: 201, body: { name: model } });
    assert.deepEqual(await put(model, spec({ max_replicas: 5, min_replicas: 1 })), {
      status: 200,
      body: { name: model },
    });
    const answer = await detail(model);
    assert.equal(answer.status, 200);
    assert.equal(answer.body.max_replicas, 5);
    assert.equal(answer.body.min_replicas, 1);
    // Replacing the profiles replaces them all.
    assert.equal(
      (await put(model, spec({ profiles: [{ name: 'only', resources: { cores: 2 } }] }))).status,
      200,
    );
    assert.deepEqual(
      (await detail(model)).body.profiles.map((p: any) => p.name),
      ['only'],
    );
  });

  it('GET /api/v1/models lists each model with owner, replica counts, load, capacity and status', async () => {
    const model = name('listed');
    assert.equal((await put(model, spec({ owner: 'team:Acme/ml' }))).status, 201);
    const answer = await stack.call('GET', '/api/v1/models');
    assert.equal(answer.status, 200);
    const found = answer.body.find((m: any) => m.name === model);
    assert.deepEqual(found, {
      name: model,
      owner: `team:${teamId}`,
      owner_name: 'Acme / ml',
      priority: 0,
      min_replicas: 0,
      max_replicas: 3,
      replicas: { pending: 0, starting: 0, ready: 0, draining: 0 },
      in_flight: null,
      load_reported_at: null,
      capacity_at_slo: 0,
      status: 'new',
      last_decision: null,
      freshness: null,
    });
    const names = answer.body.map((m: any) => m.name);
    assert.deepEqual(names, [...names].sort(), 'by name');
  });

  it('GET /api/v1/models/{name} adds profiles, replicas and the newest decisions', async () => {
    const model = name('detailed');
    assert.equal(
      (await put(model, spec({ owner: `project:${projectId}`, target_tokens_per_sec: 500 }))).status,
      201,
    );
    await replica(`${model}-r1`, model, 'h100', { gpus: 1, memory_gib: 80 }, 'ready');
    await replica(`${model}-r2`, model, 'h100', { gpus: 1, memory_gib: 80 }, 'starting');
    await replica(`${model}-r3`, model, 'cpu', { cores: 16 }, 'draining');
    await replica(`${model}-r4`, model, 'h100', { gpus: 1, memory_gib: 80 }, 'stopped');
    // The draining one was preempted for another model: it says for which.
    await stack.sql`update replicas set preempted_for = ${name('taker')} where id = ${`${model}-r3`}`;
    await stack.sql`insert into decisions (model, action, reason, inputs)
      values (${model}, 'place', 'first', '{}'), (${model}, 'none', 'steady: 0 in flight', '{"in_flight": 0}')`;

    const answer = await detail(model);
    assert.equal(answer.status, 200, JSON.stringify(answer.body));
    const body = answer.body;
    assert.equal(body.owner, `project:${projectId}`);
    assert.equal(body.owner_name, 'Acme/ml/training');
    assert.equal(body.target_tokens_per_sec, 500);
    assert.deepEqual(body.replicas, { pending: 0, starting: 1, ready: 1, draining: 1 });
    // Serving replicas (ready, starting) count their profile's concurrency: 8 + 8; draining does not.
    assert.equal(body.capacity_at_slo, 16);
    assert.equal(body.status, 'steady');
    assert.equal(body.last_decision.reason, 'steady: 0 in flight');
    assert.deepEqual(
      body.decisions.map((d: any) => d.reason),
      ['steady: 0 in flight', 'first'],
    );
    assert.match(body.decisions[0].at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    assert.deepEqual(body.profiles, [
      {
        name: 'h100',
        priority: 10,
        resources: { gpus: 1, memory_gib: 80 },
        gpu_model: 'H100',
        default_concurrency: 8,
      },
      {
        name: 'cpu',
        priority: 0,
        resources: { cores: 16 },
        engine: { kind: 'llama.cpp', model: '/models/chat.gguf', args: ['--ctx', '4096'] },
      },
    ]);
    const listed = body.replicas_list.map((r: any) => [r.id, r.state]).sort();
    assert.deepEqual(listed, [
      [`${model}-r1`, 'ready'],
      [`${model}-r2`, 'starting'],
      [`${model}-r3`, 'draining'],
    ]);
    assert.match(body.replicas_list[0].created_at, /Z$/);
    const preemptedFor = (replicas: any[]) => replicas.map((r) => [r.id, r.preempted_for]).sort();
    const freed = [
      [`${model}-r1`, undefined],
      [`${model}-r2`, undefined],
      [`${model}-r3`, name('taker')],
    ];
    assert.deepEqual(preemptedFor(body.replicas_list), freed);
    const all = (await stack.call('GET', `/api/v1/replicas?model=${model}`)).body;
    assert.deepEqual(preemptedFor(all), [...freed, [`${model}-r4`, undefined]]);
  });

  it('GET /api/v1/models/{name} -> 404 for an unknown model', async () => {
    assertError(await detail(name('missing')), 404, `there is no model "${name('missing')}"`);
  });

  it('DELETE /api/v1/models/{name} -> 200 and the model is deleting; 404 when unknown', async () => {
    const model = name('doomed');
    assert.equal((await put(model, spec())).status, 201);
    assert.deepEqual(await stack.call('DELETE', `/api/v1/models/${model}`), {
      status: 200,
      body: { deleting: model },
    });
    // Without a worker nobody drains it: it stays, marked deleting.
    assert.equal((await detail(model)).body.status, 'deleting');
    // Once drained (as its reconciler does), removed with its replicas' rows: created again, it has none.
    await stack.sql`insert into replicas (id, model, profile, node, resources, state)
      values (${`${model}-1`}, ${model}, 'h100', 'gpu-1', ${stack.sql.json({ gpus: 1 })}, 'stopped'),
        (${`${model}-2`}, ${model}, 'h100', 'gpu-1', ${stack.sql.json({ gpus: 1 })}, 'failed')`;
    assert.equal(await removeModel(stack.sql, model), true);
    assert.equal((await put(model, spec())).status, 201);
    assert.deepEqual((await stack.call('GET', `/api/v1/replicas?model=${model}`)).body, []);
    assertError(
      await stack.call('DELETE', `/api/v1/models/${name('never')}`),
      404,
      `there is no model "${name('never')}"`,
    );
  });

  describe('owner', () => {
    it('PUT takes the owner as any scope form and stores its key', async () => {
      const model = name('owned');
      assert.equal((await put(model, spec({ owner: 'team:acme / ML' }))).status, 201);
      assert.equal((await detail(model)).body.owner, `team:${teamId}`);
    });

    it('POST /api/v1/models/{name}/owner -> 200 {model, owner}; "" clears it', async () => {
      const model = name('moving');
      assert.equal((await put(model, spec())).status, 201);
      assert.equal((await detail(model)).body.owner, '');
      assert.deepEqual(await setOwner(model, { owner: 'project:training' }), {
        status: 200,
        body: { model, owner: `project:${projectId}` },
      });
      const moved = (await detail(model)).body;
      assert.equal(moved.owner, `project:${projectId}`);
      assert.equal(moved.owner_name, 'Acme/ml/training');
      assert.deepEqual(await setOwner(model, { owner: 'team:Acme/ml' }), {
        status: 200,
        body: { model, owner: `team:${teamId}` },
      });
      assert.deepEqual(await setOwner(model, { owner: '' }), { status: 200, body: { model, owner: '' } });
      const cleared = (await detail(model)).body;
      assert.equal(cleared.owner, '');
      assert.equal(cleared.owner_name, null);
    });

    it('{} and {"owner": null} clear the owner too, as the original API did; answers show ""', async () => {
      const model = name('unowned');
      assert.equal((await put(model, spec())).status, 201);
      for (const body of [{}, { owner: null }]) {
        assert.equal((await setOwner(model, { owner: 'team:Acme/ml' })).body.owner, `team:${teamId}`);
        assert.deepEqual(await setOwner(model, body), { status: 200, body: { model, owner: '' } });
        assert.equal((await detail(model)).body.owner, '');
        const listed = (await stack.call('GET', '/api/v1/models')).body.find((m: any) => m.name === model);
        assert.equal(listed.owner, '');
        assert.equal(listed.owner_name, null);
      }
    });

    it('404 for an unknown model, 400 for an owner that does not resolve, and nothing changes', async () => {
      const model = name('kept');
      assert.equal((await put(model, spec({ owner: 'team:Acme/ml' }))).status, 201);
      const before = (await detail(model)).body;
      assertError(
        await setOwner(name('ghost'), { owner: 'team:Acme/ml' }),
        404,
        `there is no model "${name('ghost')}"`,
      );
      assertError(await setOwner(model, { owner: 'team:Acme/nope' }), 400, 'there is no team "Acme/nope"');
      assertError(
        await setOwner(model, { owner: 'Acme' }),
        400,
        '"Acme" is not org:NAME, team:ORG/TEAM or project:ORG/TEAM/PROJECT',
      );
      assertError(await setOwner(model, { owner: 7 }), 400, 'owner must be a string');
      assertError(await setOwner(model, { owner: 'team:Acme/ml', also: 1 }), 400, 'unknown field "also"');
      assertError(await setOwner(model, '{"owner": '), 400, /^the request is not valid JSON: /);
      assertError(
        await setOwner(model, 'owner=', { 'content-type': 'application/x-www-form-urlencoded' }),
        400,
        /^the request is not valid JSON: /,
      );
      assertError(await setOwner(model, { owner: '', pad: 'x'.repeat(5 * 1024) }), 413, /larger than 4 KiB/);
      assert.deepEqual((await detail(model)).body, before);
    });
  });

  describe('owner and target set apart from the spec', () => {
    it('PUT without owner or target keeps what was set apart; null clears them, "" clears the owner', async () => {
      const model = name('kept-apart');
      assert.equal((await put(model, spec())).status, 201);
      assert.equal((await setOwner(model, { owner: 'team:Acme/ml' })).status, 200);
      const target = await stack.call('POST', `/api/v1/models/${model}/target`, {
        tokens_per_sec: 250,
        apply: true,
      });
      assert.equal(target.status, 200, JSON.stringify(target.body));
      assert.equal((await put(model, spec({ max_replicas: 4 }))).status, 200);
      let stored = (await detail(model)).body;
      assert.equal(stored.owner, `team:${teamId}`);
      assert.equal(stored.target_tokens_per_sec, 250);
      assert.equal(stored.max_replicas, 4);

      assert.equal((await put(model, spec({ target_tokens_per_sec: null }))).status, 200);
      stored = (await detail(model)).body;
      assert.equal(stored.owner, `team:${teamId}`);
      assert.equal(stored.target_tokens_per_sec, undefined);

      assert.equal((await put(model, spec({ owner: null, target_tokens_per_sec: 90 }))).status, 200);
      stored = (await detail(model)).body;
      assert.equal(stored.owner, '');
      assert.equal(stored.target_tokens_per_sec, 90);

      assert.equal((await put(model, spec({ owner: 'team:Acme/ml' }))).status, 200);
      assert.equal((await put(model, spec({ owner: '' }))).status, 200);
      assert.equal((await detail(model)).body.owner, '');
    });

    it('DELETE /api/v1/models/{name}/target clears the target, and again is no error; 404 when unknown', async () => {
      const model = name('untargeted');
      assert.equal((await put(model, spec({ target_tokens_per_sec: 300 }))).status, 201);
      const clear = () => stack.call('DELETE', `/api/v1/models/${model}/target`);
      assert.deepEqual(await clear(), { status: 200, body: { model, target_tokens_per_sec: null } });
      assert.equal((await detail(model)).body.target_tokens_per_sec, undefined);
      assert.deepEqual(await clear(), { status: 200, body: { model, target_tokens_per_sec: null } });
      assertError(
        await stack.call('DELETE', `/api/v1/models/${name('none')}/target`),
        404,
        `there is no model "${name('none')}"`,
      );
    });

    it('a model moved (or created) under an owner at its limit is accepted, with a warning naming it', async () => {
      assert.equal((await stack.call('POST', '/api/v1/teams', { org: 'Acme', name: 'capped' })).status, 201);
      const quota = await stack.call('PUT', '/api/v1/quotas', {
        scope: 'team:Acme/capped',
        limit: { gpus: 2 },
      });
      assert.equal(quota.status, 200, JSON.stringify(quota.body));
      const holder = name('holder');
      assert.equal((await put(holder, spec({ owner: 'team:Acme/capped' }))).status, 201);
      await replica(`${holder}-r1`, holder, 'h100', { gpus: 2, memory_gib: 160 }, 'ready');

      const moved = name('moved');
      assert.equal((await put(moved, spec())).status, 201);
      const warning = (m: string) =>
        `limit of team Acme / capped: holds 2 GPUs + 1 > 2, so ${m} starts no new replica of h100 under this owner`;
      assert.deepEqual(await setOwner(moved, { owner: 'team:Acme/capped' }), {
        status: 200,
        body: { model: moved, owner: (await detail(holder)).body.owner, warnings: [warning(moved)] },
      });
      assert.equal((await detail(moved)).body.owner_name, 'Acme / capped', 'accepted all the same');
      // Moved where no limit stops it: nothing to warn of.
      assert.deepEqual((await setOwner(moved, { owner: 'team:Acme/ml' })).body.warnings, undefined);

      const created = name('created');
      assert.deepEqual(await put(created, spec({ owner: 'team:Acme/capped' })), {
        status: 201,
        body: { name: created, warnings: [warning(created)] },
      });
      // Applied again under the owner it has: not moved, nothing to warn of.
      assert.deepEqual(await put(created, spec({ owner: 'team:Acme/capped' })), {
        status: 200,
        body: { name: created },
      });
    });
  });

  describe('priority (POLICY.md "Priority and fair sharing among models")', () => {
    const listed = async (model: string) =>
      (await stack.call('GET', '/api/v1/models')).body.find((m: any) => m.name === model);

    it('is stored and shown in the detail and the list; a PUT without it keeps it, 0 for a new model', async () => {
      const model = name('ranked');
      assert.equal((await put(model, spec())).status, 201);
      assert.equal((await detail(model)).body.priority, 0, 'a new model without one gets 0');
      assert.equal((await put(model, spec({ priority: 50 }))).status, 200);
      assert.equal((await detail(model)).body.priority, 50);
      assert.equal((await listed(model)).priority, 50);
      assert.equal((await put(model, spec({ max_replicas: 4 }))).status, 200);
      assert.equal((await detail(model)).body.priority, 50, 'left out: kept');
      assert.equal((await put(model, spec({ priority: -7 }))).status, 200);
      assert.equal((await listed(model)).priority, -7);
      assert.equal((await put(model, spec({ priority: 0 }))).status, 200);
      assert.equal((await detail(model)).body.priority, 0, '0 given: 0 stored');
      const created = name('ranked-new');
      assert.equal((await put(created, spec({ priority: 1_000_000 }))).status, 201);
      assert.equal((await detail(created)).body.priority, 1_000_000, 'the bound itself is taken');
      // The profile's priority is apart from the model's.
      assert.equal((await detail(created)).body.profiles[0].priority, 10);
    });

    it('refuses a priority that is not a whole number within bounds, with one sentence, and changes nothing', async () => {
      const model = name('ranked-bad');
      assert.equal((await put(model, spec({ priority: 5 }))).status, 201);
      const before = {
        one: (await detail(model)).body,
        all: (await stack.call('GET', '/api/v1/models')).body,
      };
      const range = 'priority must be between -1000000 and 1000000';
      assertError(await put(model, spec({ priority: 1_000_001 })), 400, range);
      assertError(await put(model, spec({ priority: -1_000_001 })), 400, range);
      assertError(await put(model, spec({ priority: 1.5 })), 400, 'priority must be a whole number');
      assertError(await put(model, spec({ priority: '9' })), 400, 'priority must be a number');
      assertError(await put(model, spec({ priority: null })), 400, 'priority must be a number');
      assertError(await put(name('ranked-none'), spec({ priority: 1e9 })), 400, range);
      assertError(await detail(name('ranked-none')), 404);
      assert.deepEqual(
        { one: (await detail(model)).body, all: (await stack.call('GET', '/api/v1/models')).body },
        before,
      );
    });

    it('the store refuses a priority the API would not take', async () => {
      const model = name('ranked-store');
      assert.equal((await put(model, spec())).status, 201);
      await assert.rejects(
        stack.sql`update models set priority = 1000001 where name = ${model}`,
        /models_priority_range/,
      );
      assert.equal((await detail(model)).body.priority, 0);
    });
  });

  describe('the list says which is newer: the last decision or the load beside it', () => {
    it('a decision made before the load was reported says so, with both times', async () => {
      const model = name('fresh');
      assert.equal((await put(model, spec())).status, 201);
      await stack.sql`insert into decisions (model, action, reason, inputs, at)
        values (${model}, 'none', 'steady: load never reported; 0 at SLO on 0 replicas',
          ${stack.sql.json({ in_flight: null, capacity_at_slo: 0, pending: null })}, now() - interval '5 seconds')`;
      const listed = async () =>
        (await stack.call('GET', '/api/v1/models')).body.find((m: any) => m.name === model);
      const before = await listed();
      assert.equal(before.freshness, null, 'no load yet: the decision saw what is shown');
      assert.equal(before.load_reported_at, null);

      const report = await stack.call('POST', `/api/v1/models/${model}/load`, { in_flight: 11 });
      assert.equal(report.status, 202, JSON.stringify(report.body));
      const after = await listed();
      assert.equal(after.in_flight, 11);
      assert.equal(after.last_decision.reason, 'steady: load never reported; 0 at SLO on 0 replicas');
      assert.match(after.load_reported_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.ok(Date.parse(after.load_reported_at) > Date.parse(after.last_decision.at));
      assert.equal(
        after.freshness,
        `decided at ${after.last_decision.at}, on figures from before the load reported at ${after.load_reported_at} (it saw no known load, now 11 in flight)`,
      );
      assert.equal((await detail(model)).body.freshness, after.freshness);

      // The table cuts the sentence to the line's width; -o json keeps it whole.
      const list = await ctl(stack, 'model', 'list');
      assert.equal(list.code, 0, list.stderr);
      const row = list.stdout.split('\n').find((line) => line.startsWith(model)) ?? '';
      assert.match(row, /steady: load never .*…$/);
      const json = await ctl(stack, 'model', 'list', '-o', 'json');
      const whole = JSON.parse(json.stdout).find((m: any) => m.name === model);
      assert.equal(whole.freshness, after.freshness);

      // A decision that saw the load shown needs no word.
      await stack.sql`insert into decisions (model, action, reason, inputs)
        values (${model}, 'none', 'steady: 11 in flight <= 16 at SLO on 2 replicas',
          ${stack.sql.json({ in_flight: 11, capacity_at_slo: 16, pending: null })})`;
      assert.equal((await listed()).freshness, null);
    });
  });

  describe('refusals', () => {
    const model = name('strict');

    it('refuses min_replicas above max_replicas', async () => {
      assertError(
        await put(model, spec({ min_replicas: 4, max_replicas: 2 })),
        400,
        'min_replicas (4) is above max_replicas (2)',
      );
    });

    it('refuses a profile given twice, one asking for nothing, and none at all', async () => {
      const twice = { name: 'a', resources: { gpus: 1 } };
      assertError(await put(model, spec({ profiles: [twice, twice] })), 400, 'profile "a" is given twice');
      assertError(
        await put(model, spec({ profiles: [{ name: 'a', resources: {} }] })),
        400,
        'profile "a" asks for no resources; give gpus, cores or memory_gib',
      );
      assertError(await put(model, spec({ profiles: [] })), 400, /^profiles /);
    });

    it('refuses bad resources in a profile: fractional GPUs, negative, not a number', async () => {
      const withResources = (resources: unknown) => spec({ profiles: [{ name: 'a', resources }] });
      assertError(
        await put(model, withResources({ gpus: 0.5 })),
        400,
        'profiles.0.resources.gpus must be a whole number',
      );
      assertError(
        await put(model, withResources({ cores: -2 })),
        400,
        'profiles.0.resources.cores must not be negative',
      );
      assertError(
        await put(model, withResources({ memory_gib: 'lots' })),
        400,
        'profiles.0.resources.memory_gib must be a number',
      );
      const infinite = `{"max_replicas": 1, "profiles": [{"name": "a", "resources": {"gpus": 1e400}}]}`;
      assertError(
        await put(model, infinite),
        400,
        /^profiles\.0\.resources\.gpus must be a (finite )?number$/,
      );
    });

    it('refuses unknown fields, missing fields and wrong types', async () => {
      assertError(await put(model, spec({ replicas: 2 })), 400, 'unknown field "replicas"');
      assertError(
        await put(model, spec({ profiles: [{ name: 'a', resources: { gpus: 1 }, gpus: 1 }] })),
        400,
        'unknown field "gpus" in profiles.0',
      );
      assertError(await put(model, { profiles: spec().profiles }), 400, 'max_replicas is required');
      assertError(await put(model, spec({ max_replicas: 1.5 })), 400, /^max_replicas must be a whole number/);
      assertError(await put(model, spec({ max_replicas: '3' })), 400, 'max_replicas must be a number');
      assertError(
        await put(
          model,
          spec({ profiles: [{ name: 'a', resources: { gpus: 1 }, engine: { kind: 'docker' } }] }),
        ),
        400,
        /^profiles\.0\.engine\.kind /,
      );
    });

    it("refuses an engine's mistakes in one sentence, and creates nothing", async () => {
      const withEngine = (engine: unknown) =>
        spec({ profiles: [{ name: 'a', resources: { gpus: 1 }, engine }] });
      assertError(await put(model, withEngine({ kind: 'vllm' })), 400, 'profiles.0.engine.model is required');
      assertError(
        await put(model, withEngine({ kind: 'command', argv: ['serve', '--port={prot}'] })),
        400,
        'profiles.0.engine.argv.1 names {prot}, which is no placeholder (they are {port}, {host}, {model}, {replica})',
      );
      assertError(
        await put(model, withEngine({ kind: 'sim', max_batch: 0 })),
        400,
        'profiles.0.engine.max_batch must be at least 1',
      );
      assertError(await detail(model), 404);
    });

    it('refuses an owner that does not resolve, and creates nothing', async () => {
      assertError(await put(model, spec({ owner: 'team:nope' })), 400, 'there is no team "nope"');
      assertError(await put(model, spec({ owner: 'ml' })), 400, /is not org:NAME/);
      assertError(await detail(model), 404);
    });

    it('refuses a model name that cannot be a name', async () => {
      assertError(await put('bad%20name', spec()), 400, /^name must be 1 to 63 letters/);
      assertError(await put(`-${tag}`, spec()), 400, /^name must be/);
      assertError(await put('x'.repeat(64), spec()), 400, /^name must be/);
    });

    it('answers 400 for a body that is not JSON, whatever its Content-Type', async () => {
      assertError(await put(model, '{"max_replicas": 1,'), 400, /^the request is not valid JSON: /);
      assertError(
        await put(model, 'max_replicas=1', { 'content-type': 'application/x-www-form-urlencoded' }),
        400,
        /^the request is not valid JSON: /,
      );
      assertError(await detail(model), 404);
    });

    it('answers 413 for a body above 256 KiB (and takes one just under)', async () => {
      // An engine's arguments are the one field that long: 255 of about 1 KiB each.
      const pad = Array.from({ length: 255 }, () => 'x'.repeat(1020));
      const under = spec({
        profiles: [{ name: 'a', resources: { gpus: 1 }, engine: { kind: 'command', argv: pad } }],
      });
      assert.equal((await put(name('roomy'), under)).status, 201);
      const over = spec({
        profiles: [
          {
            name: 'a',
            resources: { gpus: 1 },
            engine: { kind: 'command', argv: [...pad, 'y'.repeat(2048)] },
          },
        ],
      });
      assertError(await put(model, over), 413, /larger than 256 KiB/);
      assertError(await detail(model), 404);
    });
  });

  it('concurrent PUTs of a new model: one 201, the rest 200, and one of them whole', async () => {
    const model = name('raced');
    const bodies = Array.from({ length: 10 }, (_, i) =>
      spec({
        max_replicas: i + 1,
        profiles: [
          { name: `first-${i}`, resources: { gpus: 1 } },
          { name: `second-${i}`, resources: { cores: i + 1 } },
        ],
      }),
    );
    const answers = await Promise.all(bodies.map((body) => put(model, body)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, 200, 200, 200, 200, 200, 200, 200, 201]);
    const stored = (await detail(model)).body;
    const i = stored.max_replicas - 1;
    assert.deepEqual(
      stored.profiles.map((p: any) => [p.name, p.resources]),
      [
        [`first-${i}`, { gpus: 1 }],
        [`second-${i}`, { cores: i + 1 }],
      ],
    );
  });

  it('concurrent PUTs of one new name by operators of two teams: one creates it, the other gets 409', async () => {
    // Both used to find the name free, and the second's upsert then gave the first team's model away.
    assert.equal((await stack.call('POST', '/api/v1/teams', { org: 'Acme', name: 'rival' })).status, 201);
    const as = async (team: string) => ({
      team,
      headers: {
        authorization: `Bearer ${await stack.token({ name: `raced-${team}-${tag}`, role: 'operator', scope: `team:Acme/${team}` })}`,
      },
    });
    const operators = [await as('ml'), await as('rival')];
    for (let round = 0; round < 8; round++) {
      const model = name(`contested-${round}`);
      const answers = await Promise.all(
        // Inline engines are an admin's (api-runtimes.test.ts): the operators' specs have none.
        operators.map(({ team, headers }) =>
          put(model, withoutEngines(spec({ owner: `team:Acme/${team}` })), headers),
        ),
      );
      assert.deepEqual(answers.map((a) => a.status).sort(), [201, 409], `round ${round}`);
      const winner = operators[answers.findIndex((a) => a.status === 201)];
      assert.equal((await detail(model)).body.owner_name, `Acme / ${winner.team}`, `round ${round}`);
    }
  });

  it("a team operator's target change racing a move of its model to another team never lands after the move", async () => {
    // The target change used to check the owner before its transaction, and could then write to a model
    // another team owned by the time it committed.
    assert.equal((await stack.call('POST', '/api/v1/teams', { org: 'Acme', name: 'elsewhere' })).status, 201);
    const bearer = async (grant: string, scope: string) => ({
      authorization: `Bearer ${await stack.token({ name: `${grant}-${tag}`, role: 'operator', scope })}`,
    });
    const org = await bearer('org-mover', 'org:Acme');
    const team = await bearer('ml-sizer', 'team:Acme/ml');
    for (let round = 0; round < 8; round++) {
      const model = name(`moving-${round}`);
      assert.equal((await put(model, spec({ owner: 'team:Acme/ml' }))).status, 201);
      const [moved, sized] = await Promise.all([
        setOwner(model, { owner: 'team:Acme/elsewhere' }, org),
        stack.call('POST', `/api/v1/models/${model}/target`, { tokens_per_sec: 100, apply: true }, team),
      ]);
      assert.equal(moved.status, 200, `round ${round}`);
      const order = (
        await stack.sql<{ action: string }[]>`
          select action from audit_log where target = ${`model:${model}`} and action <> 'model.put' order by id`
      ).map((row) => row.action);
      if (sized.status === 200) assert.deepEqual(order, ['model.target', 'model.owner'], `round ${round}`);
      else {
        assert.equal(sized.status, 404, `round ${round}: the moved model is out of the team's view`);
        assert.deepEqual(order, ['model.owner'], `round ${round}`);
      }
    }
  });

  it('a failed request changes nothing', async () => {
    const model = name('stable');
    assert.equal((await put(model, spec({ owner: 'team:Acme/ml', target_tokens_per_sec: 100 }))).status, 201);
    const before = { one: (await detail(model)).body, all: (await stack.call('GET', '/api/v1/models')).body };
    const failures = [
      await put(model, spec({ min_replicas: 9 })),
      await put(
        model,
        spec({
          profiles: [
            { name: 'a', resources: { gpus: 1 } },
            { name: 'a', resources: { gpus: 2 } },
          ],
        }),
      ),
      await put(model, spec({ owner: 'team:nowhere' })),
      await put(model, spec({ unknown: true })),
      await put(model, { ...spec(), pad: 'z'.repeat(300 * 1024) }),
      await put(model, '{"max_replicas": 1'),
      await put(model, 'max_replicas=9', { 'content-type': 'application/x-www-form-urlencoded' }),
      await setOwner(model, { owner: 'project:nowhere' }),
      await setOwner(model, { owner: 7 }),
    ];
    for (const failure of failures)
      assert.ok(failure.status >= 400 && failure.status < 500, JSON.stringify(failure));
    assert.deepEqual(
      { one: (await detail(model)).body, all: (await stack.call('GET', '/api/v1/models')).body },
      before,
    );
  });
});
