// `llmgw ctl token create|list|revoke` against a real API: the secret printed once (alone on stdout, so
// it can be captured), listed never, revoked at once; --expires-in and refusals.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCtlCapturing } from '../../src/cli/ctl/index.ts';
import { ctl } from '../support/ctl.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('llmgw ctl token', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
    assert.equal((await stack.call('POST', '/api/v1/orgs', { name: 'Acme' })).status, 201);
    assert.equal((await stack.call('POST', '/api/v1/teams', { org: 'Acme', name: 'ml' })).status, 201);
  });
  after(() => stack.stop());

  it('creates a token and prints its secret alone on stdout, which then lets its holder in', async () => {
    const made = await ctl(
      stack,
      'token',
      'create',
      '--name',
      'dana',
      '--role',
      'viewer',
      '--scope',
      'team:Acme/ml',
    );
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /^llmgw_[\w-]{43}\n$/);
    assert.equal(made.stderr, 'created token dana (viewer); its secret is shown this once:\n');
    const secret = made.stdout.trim();
    const teams = await runCtlCapturing(['--server', stack.url, 'team', 'list', '-o', 'json'], {
      LLMGW_TOKEN: secret,
    });
    assert.equal(teams.code, 0, teams.stderr);
    assert.deepEqual(
      JSON.parse(teams.stdout).map((t: { path: string }) => t.path),
      ['Acme/ml'],
    );
  });

  it('--role agent --node binds an agent token to its node, address and bounds, which then registers that node and no other, within them', async () => {
    const made = await ctl(
      stack,
      'token',
      'create',
      '--name',
      'agent-gpu-1',
      '--role',
      'agent',
      '--node',
      'gpu-1',
      '--address',
      '10.0.0.11',
      '--max-capacity',
      'gpus=8,cores=96',
      '--gpu-model',
      'H100',
      '--labels',
      'zone=a,rack=3',
    );
    assert.equal(made.code, 0, made.stderr);
    const listed = (await stack.call('GET', '/api/v1/tokens')).body.find(
      (t: any) => t.name === 'agent-gpu-1',
    );
    assert.deepEqual(
      [listed.node_address, listed.node_bounds],
      [
        '10.0.0.11',
        { capacity: { gpus: 8, cores: 96 }, gpu_model: 'H100', labels: { zone: 'a', rack: '3' } },
      ],
    );
    const agent = { authorization: `Bearer ${made.stdout.trim()}` };
    const body = { capacity: { gpus: 8 }, driver: 'agent', labels: { zone: 'a' } };
    assert.deepEqual((await stack.call('PUT', '/api/v1/nodes/gpu-1', body, agent)).body, {
      name: 'gpu-1',
      address: '10.0.0.11',
    });
    assert.equal((await stack.call('PUT', '/api/v1/nodes/gpu-2', body, agent)).status, 403);
    const beyond = await stack.call('PUT', '/api/v1/nodes/gpu-1', { ...body, capacity: { gpus: 9 } }, agent);
    assert.equal(beyond.status, 403);
    const refused = await ctl(stack, 'token', 'create', '--name', 'agent-x', '--role', 'agent');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /an agent token needs a node and takes no scope/);
  });

  it('-o json gives name, role, scope and token; --models and --expires-in reach the server', async () => {
    const made = await ctl(
      stack,
      'token',
      'create',
      '--name',
      'gw-1',
      '--role',
      'reporter',
      '--models',
      'chat, code',
      '--expires-in',
      '30d',
      '-o',
      'json',
    );
    assert.equal(made.code, 0, made.stderr);
    const body = JSON.parse(made.stdout);
    assert.deepEqual(Object.keys(body).sort(), ['name', 'role', 'scope', 'token']);
    assert.deepEqual([body.name, body.role, body.scope], ['gw-1', 'reporter', null]);
    const listed = JSON.parse((await ctl(stack, 'token', 'list', '-o', 'json')).stdout);
    const gw = listed.find((t: { name: string }) => t.name === 'gw-1');
    assert.deepEqual(gw.models, ['chat', 'code']);
    const days = (Date.parse(gw.expires_at) - Date.now()) / 86_400_000;
    assert.ok(days > 29.9 && days <= 30, `expires in ${days} days`);
    assert.ok(!JSON.stringify(listed).includes(body.token), 'the list never holds a secret');
  });

  it('lists tokens as a table and revokes one', async () => {
    const list = await ctl(stack, 'token', 'list');
    assert.equal(list.code, 0, list.stderr);
    const [header, ...rows] = list.stdout.trimEnd().split('\n');
    assert.match(header, /^NAME\s+ROLE\s+SCOPE\s+MODELS\s+EXPIRES_AT\s+CREATED_BY\s+CREATED_AT$/);
    assert.ok(
      rows.some((row) => /^dana\s+viewer\s+Acme \/ ml\s+-\s+-\s+bootstrap\s/.test(row)),
      rows.join('\n'),
    );
    const revoked = await ctl(stack, 'token', 'revoke', 'dana');
    assert.deepEqual([revoked.code, revoked.stdout], [0, 'revoked token dana\n']);
    const again = await ctl(stack, 'token', 'revoke', 'dana');
    assert.deepEqual([again.code, again.stderr], [1, 'there is no token "dana"\n']);
  });

  it('exits 2 on a duration it cannot read, and 1 with the sentence when the server refuses', async () => {
    for (const bad of ['30', '30x', '0d', '1.5d', 'soon']) {
      const run = await ctl(stack, 'token', 'create', '--name', 'x', '--role', 'viewer', '--expires-in', bad);
      assert.equal(run.code, 2, bad);
      assert.match(run.stderr, /--expires-in .*: give a count and a unit m, h, d or w, e\.g\. 30d/);
    }
    const missing = await ctl(stack, 'token', 'create', '--role', 'viewer');
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /token create needs --name/);
    const noScope = await ctl(stack, 'token', 'create', '--name', 'op', '--role', 'operator');
    assert.deepEqual(
      [noScope.code, noScope.stderr],
      [1, 'an operator token needs a scope: the one it manages beneath\n'],
    );
    const viewer = await stack.token({ name: 'eve', role: 'viewer' });
    const refused = await runCtlCapturing(['--server', stack.url, '--token', viewer, 'token', 'list']);
    assert.deepEqual(
      [refused.code, refused.stderr],
      [1, 'a viewer may not manage tokens: a viewer only reads\n'],
    );
  });
});
