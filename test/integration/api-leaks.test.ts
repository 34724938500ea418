// Issue 19, item 4: a caller learns nothing about scopes and models outside what its token may see.
// Every endpoint that takes a scope or model name is asked, by every restricted role, about names that
// exist outside its view; then those things are deleted and the same requests are asked again: each
// answer (status and body bytes) must not change. Apart: a model name taken outside the caller's view,
// and a reclaimed replica's note read by a viewer who cannot see the model that reclaimed it.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { newId } from '../../src/store/ids.ts';
import { assertError } from '../support/assertions.ts';
import { decisionSaying, FAST, gpuNode, gpuProfile, ok, settledAt } from '../support/cluster.ts';
import { type Stack, startStack } from '../support/stack.ts';

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('names outside a token’s view', () => {
  let stack: Stack;
  // Model names reach Temporal workflow IDs, shared by every stack of the run: keep them unique.
  const tag = newId().slice(0, 6);
  const chat = `chat-${tag}`; // owned by team Acme/ml, the restricted tokens' own
  const secret = `secret-${tag}`; // owned by team Beta/secret: outside every restricted token's view
  const stray = `stray-${tag}`; // owned by no scope: outside every token bound to a scope
  const ids: Record<string, string> = {};
  const tokens: Record<string, string> = {};

  before(async () => {
    stack = await startStack({ nodes: [gpuNode('gpu-1', 8)] });
    for (const name of ['Acme', 'Beta']) ids[name] = (await ok(stack, 'POST', '/api/v1/orgs', { name })).id;
    for (const [org, name] of [
      ['Acme', 'ml'],
      ['Beta', 'secret'],
      // Named like Acme/ml: `team:ml` must still be Acme/ml for Acme's tokens, not "any of 2 teams".
      ['Beta', 'ml'],
    ]) {
      ids[`${org}/${name}`] = (await ok(stack, 'POST', '/api/v1/teams', { org, name })).id;
    }
    ids['Beta/secret/hidden'] = (
      await ok(stack, 'POST', '/api/v1/projects', { team: 'Beta/secret', name: 'hidden' })
    ).id;
    await ok(stack, 'PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', guarantee: { gpus: 4 } });
    await ok(stack, 'PUT', '/api/v1/quotas', { scope: 'team:Beta/secret', limit: { gpus: 4 } });
    const model = (owner?: string) => ({
      ...(owner ? { owner } : {}),
      max_replicas: 2,
      profiles: [gpuProfile('h100', 1)],
    });
    await ok(stack, 'PUT', `/api/v1/models/${chat}`, model('team:Acme/ml'));
    await ok(stack, 'PUT', `/api/v1/models/${secret}`, model('team:Beta/secret'));
    await ok(stack, 'PUT', `/api/v1/models/${stray}`, model());
    for (const name of [secret, stray]) {
      await ok(stack, 'PUT', '/api/v1/measurements', {
        model: name,
        profile: 'h100',
        max_concurrency_at_slo: 8,
        throughput_tok_per_sec: 800,
        slo: {},
      });
      await stack.sql`
        insert into replicas (id, model, profile, node, resources, state)
        values (${`r-${name}`}, ${name}, 'h100', 'gpu-1', ${stack.sql.json({ gpus: 1 })}, 'ready')`;
      await stack.sql`insert into decisions (model, action, reason, inputs)
        values (${name}, 'none', ${`steady: ${name} at 1 replica`}, '{}')`;
    }
    const grants: [string, Record<string, unknown>][] = [
      ['operator', { role: 'operator', scope: 'team:Acme/ml' }],
      ['bound-viewer', { role: 'viewer', scope: 'team:Acme/ml' }],
      ['viewer', { role: 'viewer' }],
      ['bound-reporter', { role: 'reporter', scope: 'team:Acme/ml' }],
      ['model-reporter', { role: 'reporter', models: [chat] }],
    ];
    for (const [name, grant] of grants) tokens[name] = await stack.token({ name, ...grant } as never);
  });
  after(() => stack.stop());

  /** The requests that name something outside the restricted tokens' view, and the lists they read. */
  const requests = (): [method: string, path: string, body?: unknown][] => {
    const scopes = [
      'org:Beta',
      `org:${ids.Beta}`,
      'team:Beta/secret',
      'team:secret',
      `team:${ids['Beta/secret']}`,
      'project:Beta/secret/hidden',
      'project:hidden',
      `project:${ids['Beta/secret/hidden']}`,
    ];
    const measurement = (model: string) => ({
      model,
      profile: 'h100',
      max_concurrency_at_slo: 9,
      throughput_tok_per_sec: 900,
      slo: {},
    });
    return [
      ...[...scopes, 'Beta'].map((org): [string, string, unknown] => [
        'POST',
        '/api/v1/teams',
        { org, name: 'x' },
      ]),
      ...[...scopes, 'Beta/secret', 'secret'].map((team): [string, string, unknown] => [
        'POST',
        '/api/v1/projects',
        { team, name: 'x' },
      ]),
      ['DELETE', `/api/v1/orgs/${ids.Beta}`],
      ['DELETE', `/api/v1/teams/${ids['Beta/secret']}`],
      ['DELETE', `/api/v1/teams/${ids['Beta/ml']}`],
      ['DELETE', `/api/v1/projects/${ids['Beta/secret/hidden']}`],
      ...scopes.flatMap((scope): [string, string, unknown?][] => [
        ['PUT', '/api/v1/quotas', { scope, limit: { gpus: 1 } }],
        ['PUT', '/api/v1/quotas', { scope, guarantee: { gpus: 1000 } }],
        ['POST', '/api/v1/quotas/preview', { scope, limit: { gpus: 1 } }],
        ['DELETE', `/api/v1/quotas/${encodeURIComponent(scope)}`],
        [
          'PUT',
          `/api/v1/models/mine-${tag}`,
          { owner: scope, max_replicas: 1, profiles: [gpuProfile('h100', 1)] },
        ],
        ['POST', `/api/v1/models/${chat}/owner`, { owner: scope }],
        ['POST', '/api/v1/tokens', { name: 'x', role: 'viewer', scope }],
      ]),
      // `team:ml` is the caller's own team, whatever else is named ml.
      ['POST', '/api/v1/quotas/preview', { scope: 'team:ml', limit: { gpus: 1 } }],
      ...[secret, stray].flatMap((model): [string, string, unknown?][] => [
        ['GET', `/api/v1/models/${model}`],
        ['GET', `/api/v1/models/${model}/decisions`],
        ['DELETE', `/api/v1/models/${model}`],
        ['POST', `/api/v1/models/${model}/owner`, { owner: 'team:Acme/ml' }],
        ['POST', `/api/v1/models/${model}/owner`, { owner: '' }],
        ['POST', `/api/v1/models/${model}/load`, { in_flight: 1 }],
        ['POST', `/api/v1/models/${model}/target`, { tokens_per_sec: 100 }],
        ['PUT', '/api/v1/measurements', measurement(model)],
        ['GET', `/api/v1/measurements?model=${model}`],
        ['GET', `/api/v1/replicas?model=${model}`],
        ['POST', '/api/v1/tokens', { name: 'x', role: 'reporter', models: [model] }],
      ]),
      ...['orgs', 'teams', 'projects', 'tree', 'quotas', 'models', 'replicas', 'measurements'].map(
        (list): [string, string] => ['GET', `/api/v1/${list}`],
      ),
    ];
  };

  /** Every request as every restricted token: `who method path body` -> `status body-bytes`. */
  const askAll = async () => {
    const answers = new Map<string, string>();
    for (const who of Object.keys(tokens)) {
      for (const [method, path, body] of requests()) {
        // An unbound viewer reads everything: only what it may not do is asked of it.
        if (who === 'viewer' && method === 'GET') continue;
        const response = await fetch(`${stack.url}${path}`, {
          method,
          headers: {
            ...bearer(tokens[who]),
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        answers.set(
          `${who}: ${method} ${path} ${JSON.stringify(body ?? '')}`,
          `${response.status} ${await response.text()}`,
        );
      }
    }
    return answers;
  };

  it('every answer about a name outside the view is byte for byte the answer about one that never existed', async () => {
    const whileThere = await askAll();
    // The requests changed nothing: the foreign things are all still there.
    assert.equal((await ok(stack, 'GET', `/api/v1/models/${secret}`)).owner, `team:${ids['Beta/secret']}`);
    assert.equal((await ok<unknown[]>(stack, 'GET', '/api/v1/orgs')).length, 2);

    const gone = [secret, stray];
    const beta = [`org:${ids.Beta}`, `team:${ids['Beta/secret']}`, `team:${ids['Beta/ml']}`];
    const { sql } = stack;
    await sql`delete from decisions where model in ${sql(gone)}`;
    await sql`delete from replicas where model in ${sql(gone)}`;
    await sql`delete from measurements where model in ${sql(gone)}`;
    await sql`delete from models where name in ${sql(gone)}`;
    await sql`delete from capacity_quotas where scope in ${sql(beta)}`;
    await sql`delete from projects where id = ${ids['Beta/secret/hidden']}`;
    await sql`delete from teams where org_id = ${ids.Beta}`;
    await sql`delete from orgs where id = ${ids.Beta}`;
    const neverThere = await askAll();

    const differ = [...whileThere]
      .filter(([request, answer]) => neverThere.get(request) !== answer)
      .map(
        ([request, answer]) =>
          `${request}\n  while there: ${answer}\n  never there: ${neverThere.get(request)}`,
      );
    assert.deepEqual(
      differ,
      [],
      `${differ.length} of ${whileThere.size} answers tell:\n${differ.join('\n')}`,
    );
    assert.ok(whileThere.size > 300, `${whileThere.size} requests`);

    // What the refusals say, for a name that exists or not alike.
    const as = (who: string) => bearer(tokens[who]);
    assertError(
      await stack.call(
        'PUT',
        '/api/v1/quotas',
        { scope: 'team:Beta/secret', limit: { gpus: 1 } },
        as('operator'),
      ),
      400,
      'there is no team "Beta/secret"',
    );
    assertError(
      await stack.call('DELETE', `/api/v1/teams/${ids['Beta/secret']}`, undefined, as('operator')),
      404,
      `there is no team with ID "${ids['Beta/secret']}"`,
    );
    assertError(
      await stack.call(
        'POST',
        '/api/v1/quotas/preview',
        { scope: 'team:ml', limit: { gpus: 1 } },
        as('operator'),
      ),
      403,
      'an operator of team Acme / ml may not change the quota of its own scope team Acme / ml',
    );
  });

  it('a model name taken outside the view is refused without naming its owner', async () => {
    const taken = `taken-${tag}`;
    await ok(stack, 'PUT', `/api/v1/models/${taken}`, { max_replicas: 1, profiles: [gpuProfile('h100', 1)] });
    // Model names are one namespace, so this alone cannot be answered as for a free name.
    const answer = await stack.call(
      'PUT',
      `/api/v1/models/${taken}`,
      { owner: 'team:Acme/ml', max_replicas: 1, profiles: [gpuProfile('h100', 1)] },
      bearer(tokens.operator),
    );
    assertError(answer, 409, `the name "${taken}" is taken by a model of another scope; choose another`);
    assert.equal((await ok(stack, 'GET', `/api/v1/models/${taken}`)).owner, '', 'unchanged');
  });
});

describe('a reclaimed replica’s note, read by a viewer who cannot see the model that reclaimed it', () => {
  let stack: Stack;
  const tag = newId().slice(0, 6);
  const web = `web-${tag}`;
  const ml = `ml-${tag}`;
  const teams: Record<string, string> = {};

  before(async () => {
    stack = await startStack({ worker: true, env: FAST, nodes: [gpuNode('gpu-1', 2)] });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Acme' });
    for (const name of ['ml', 'web']) {
      teams[name] = `team:${(await ok(stack, 'POST', '/api/v1/teams', { org: 'Acme', name })).id}`;
    }
    await ok(stack, 'PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', guarantee: { gpus: 1 } });
  });
  after(() => stack.stop());

  it('names neither the model nor its scope; an admin and a viewer of both still read them', async () => {
    const model = async (name: string, owner: string, inFlight: number) => {
      await ok(stack, 'PUT', `/api/v1/models/${name}`, {
        owner,
        max_replicas: 4,
        profiles: [gpuProfile('h100', 1, { default_concurrency: 1 })],
      });
      await ok(stack, 'POST', `/api/v1/models/${name}/load`, { in_flight: inFlight });
    };
    // web borrows both GPUs; ml, within its guarantee of 1, takes one back.
    await model(web, 'team:Acme/web', 2);
    await settledAt(stack, web, 2);
    await model(ml, 'team:Acme/ml', 1);
    const note: { reason: string; replica?: string } = await decisionSaying(stack, web, /^reclaimed for /);
    assert.match(
      note.reason,
      new RegExp(
        `^reclaimed for team Acme / ml \\(${teams.ml}\\): replica \\S+ on gpu-1 drains so that ${ml} can run$`,
      ),
    );

    const webViewer = bearer(
      await stack.token({ name: 'web-viewer', role: 'viewer', scope: 'team:Acme/web' }),
    );
    const shown = `reclaimed for another scope: replica ${note.replica} on gpu-1 drains so that another model can run`;
    const decisions = (await stack.call('GET', `/api/v1/models/${web}/decisions`, undefined, webViewer)).body;
    const seen = decisions.find((d: { replica?: string; action: string }) => d.action === 'reclaimed');
    assert.deepEqual([seen.reason, seen.inputs], [shown, {}]);
    for (const path of [`/api/v1/models/${web}`, '/api/v1/models', `/api/v1/models/${web}/decisions`]) {
      const text = JSON.stringify((await stack.call('GET', path, undefined, webViewer)).body);
      for (const word of [ml, teams.ml, 'Acme / ml'])
        assert.ok(!text.includes(word), `${path} names ${word}: ${text}`);
    }

    const acmeViewer = bearer(await stack.token({ name: 'acme-viewer', role: 'viewer', scope: 'org:Acme' }));
    const forAcme = (await stack.call('GET', `/api/v1/models/${web}/decisions`, undefined, acmeViewer)).body;
    assert.ok(
      forAcme.some((d: { reason: string }) => d.reason === note.reason),
      'a viewer of both reads the names',
    );
  });
});

describe('a preemption, read by a viewer of the preempting model who cannot see its victims', () => {
  let stack: Stack;
  const tag = newId().slice(0, 6);
  const web = `web-${tag}`;
  const ml = `ml-${tag}`;

  before(async () => {
    // Surplus stays (no scale-down in the test's time, load reports do not expire).
    stack = await startStack({
      worker: true,
      env: { ...FAST, LLMGW_SCALE_DOWN_WINDOW_S: '600', LLMGW_LOAD_STALE_S: '600' },
      nodes: [gpuNode('gpu-1', 2)],
    });
    for (const [org, team] of [
      ['Acme', 'ml'],
      ['Beta', 'web'],
    ]) {
      await ok(stack, 'POST', '/api/v1/orgs', { name: org });
      await ok(stack, 'POST', '/api/v1/teams', { org, name: team });
    }
  });
  after(() => stack.stop());

  it('names the victim "a replica of another model"; an admin still reads it', async () => {
    const model = (name: string, owner: string, min: number) =>
      ok(stack, 'PUT', `/api/v1/models/${name}`, {
        owner,
        min_replicas: min,
        max_replicas: 2,
        profiles: [gpuProfile('h100', 1, { default_concurrency: 1 })],
      });
    // web fills the node on load, then keeps two surplus replicas; ml's floor takes one.
    await model(web, 'team:Beta/web', 0);
    await ok(stack, 'POST', `/api/v1/models/${web}/load`, { in_flight: 2 });
    await settledAt(stack, web, 2);
    await ok(stack, 'POST', `/api/v1/models/${web}/load`, { in_flight: 0 });
    await model(ml, 'team:Acme/ml', 1);
    const preempt: { reason: string } = await decisionSaying(stack, ml, /preempted /);
    const victim = /preempted (\S+ \(priority 0, surplus\))/.exec(preempt.reason)?.[1];
    assert.ok(victim, preempt.reason);

    const mlViewer = bearer(await stack.token({ name: 'ml-viewer', role: 'viewer', scope: 'team:Acme/ml' }));
    const seen = (await stack.call('GET', `/api/v1/models/${ml}/decisions`, undefined, mlViewer)).body.find(
      (d: { action: string }) => d.action === 'preempt',
    );
    assert.equal(seen.reason, preempt.reason.replace(victim, 'a replica of another model'));
    for (const path of [`/api/v1/models/${ml}`, '/api/v1/models', `/api/v1/models/${ml}/decisions`]) {
      const text = JSON.stringify((await stack.call('GET', path, undefined, mlViewer)).body);
      for (const word of [web, victim.split(' ')[0], 'Beta'])
        assert.ok(!text.includes(word), `${path} names ${word}: ${text}`);
    }
  });
});
