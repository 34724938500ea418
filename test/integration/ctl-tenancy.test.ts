import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import { ctl } from '../support/ctl.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('llmgw ctl: org, team, project and tree', () => {
  let stack: Stack;
  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  it('creates an org, a team by ORG/TEAM and a project by ORG/TEAM/PROJECT', async () => {
    const org = await ctl(stack, 'org', 'create', 'Acme');
    assert.equal(org.code, 0, org.stderr);
    assert.match(org.stdout, /^created org Acme \(org:\S+\)\n$/);
    const team = await ctl(stack, 'team', 'create', 'Acme/ml');
    assert.equal(team.code, 0, team.stderr);
    assert.match(team.stdout, /^created team Acme\/ml \(team:\S+\)\n$/);
    const project = await ctl(stack, 'project', 'create', 'acme / ML/training', '-o', 'json');
    assert.equal(project.code, 0, project.stderr);
    const created = JSON.parse(project.stdout);
    assert.equal(created.path, 'Acme/ml/training');
    assert.equal(created.name, 'training');
  });

  it('lists each level, as a table, JSON or YAML', async () => {
    const teams = await ctl(stack, 'team', 'list');
    assert.equal(teams.code, 0);
    assert.match(teams.stdout, /^PATH\s+ID\nAcme\/ml\s+\S+\n$/);
    const orgs = JSON.parse((await ctl(stack, 'org', 'list', '-o', 'json')).stdout);
    assert.deepEqual(
      orgs.map((o: { name: string }) => o.name),
      ['Acme'],
    );
    const projects = parse((await ctl(stack, 'project', 'list', '-o', 'yaml')).stdout);
    assert.equal(projects[0].path, 'Acme/ml/training');
  });

  it('shows the tree, each scope indented under its parent', async () => {
    await stack.call('PUT', '/api/v1/quotas', {
      scope: 'team:Acme/ml',
      guarantee: { gpus: 8 },
      limit: { gpus: 16 },
    });
    const tree = await ctl(stack, 'tree');
    assert.equal(tree.code, 0, tree.stderr);
    const lines = tree.stdout.trimEnd().split('\n');
    assert.match(lines[0], /^SCOPE\s+KIND\s+GUARANTEE\s+LIMIT\s+HOLDS\s+BORROWED\s+KEY$/);
    assert.match(lines[1], /^Acme\s+org\s+-\s+-\s+0\s+0\s+org:\S+$/);
    assert.match(lines[2], /^ {2}ml\s+team\s+gpus=8\s+gpus=16\s+0\s+0\s+team:\S+$/);
    assert.match(lines[3], /^ {4}training\s+project\s/);
    const json = JSON.parse((await ctl(stack, 'tree', '-o', 'json')).stdout);
    assert.equal(json[0].children[0].children[0].name, 'training');
  });

  it('exits 1 with the server sentence as is when it refuses', async () => {
    const twice = await ctl(stack, 'org', 'create', 'Acme');
    assert.equal(twice.code, 1);
    const direct = await stack.call('POST', '/api/v1/orgs', { name: 'Acme' });
    assert.equal(twice.stderr, `${direct.body.error}\n`);
    assert.equal(twice.stdout, '');
    const inUse = await ctl(stack, 'team', 'rm', 'Acme/ml');
    assert.equal(inUse.code, 1);
    assert.ok(inUse.stderr.length > 0 && !inUse.stderr.includes('usage'), inUse.stderr);
    const noParent = await ctl(stack, 'team', 'create', 'Nobody/ml');
    assert.equal(noParent.code, 1);
    assert.equal(noParent.stderr, 'there is no org "Nobody"\n');
  });

  it('removes by path or by ID, and says when there is no such scope', async () => {
    const project = JSON.parse((await ctl(stack, 'project', 'list', '-o', 'json')).stdout)[0];
    const byId = await ctl(stack, 'project', 'rm', project.id);
    assert.equal(byId.code, 0, byId.stderr);
    assert.equal(byId.stdout, `removed project Acme/ml/training (project:${project.id})\n`);
    await stack.call('DELETE', `/api/v1/quotas/${encodeURIComponent('team:Acme/ml')}`);
    const byPath = await ctl(stack, 'team', 'rm', 'ACME/ml');
    assert.equal(byPath.code, 0, byPath.stderr);
    const missing = await ctl(stack, 'team', 'rm', 'Acme/ml');
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'there is no team "Acme/ml"\n');
  });

  it('exits 2 with the usage on a wrong command line', async () => {
    const noSlash = await ctl(stack, 'team', 'create', 'ml');
    assert.equal(noSlash.code, 2);
    assert.match(
      noSlash.stderr,
      /give the team as ORG\/NAME, e.g. Acme\/ml\nusage: llmgw ctl team create ORG\/NAME/,
    );
    const missing = await ctl(stack, 'org', 'create');
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /org create needs NAME/);
    const extra = await ctl(stack, 'org', 'list', 'extra');
    assert.equal(extra.code, 2);
    assert.match(extra.stderr, /org list does not take "extra"/);
  });
});
