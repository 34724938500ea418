import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ctl } from '../support/ctl.ts';
import { type Stack, startStack } from '../support/stack.ts';

describe('llmgw ctl quota', () => {
  let stack: Stack;
  let teamKey: string;
  before(async () => {
    stack = await startStack();
    await stack.call('POST', '/api/v1/orgs', { name: 'Acme' });
    teamKey = `team:${(await stack.call('POST', '/api/v1/teams', { org: 'Acme', name: 'ml' })).body.id}`;
  });
  after(() => stack.stop());

  it('sets a guarantee and a limit from NAME=NUMBER lists', async () => {
    const set = await ctl(
      stack,
      'quota',
      'set',
      'team:Acme/ml',
      '--guarantee',
      'gpus=8,cores=64',
      '--limit',
      'gpus=16',
    );
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, `set the quota of team:Acme/ml (${teamKey})\n`);
    const [stored] = (await stack.call('GET', '/api/v1/quotas')).body;
    assert.deepEqual(stored.guarantee, { gpus: 8, cores: 64 });
    assert.deepEqual(stored.limit, { gpus: 16 });
  });

  it('lists quotas with holds and borrowed, as a table or JSON', async () => {
    const list = await ctl(stack, 'quota', 'list');
    assert.equal(list.code, 0, list.stderr);
    const [header, row] = list.stdout.trimEnd().split('\n');
    assert.match(
      header,
      /^NAME\s+SCOPE\s+GUARANTEE\s+LIMIT\s+PREEMPTION\s+PRIORITY\s+HOLDS\s+BORROWED\s+UPDATED_BY\s+UPDATED_AT$/,
    );
    assert.match(
      row,
      new RegExp(
        `^Acme / ml\\s+${teamKey}\\s+gpus=8,cores=64\\s+gpus=16\\s+lower-claim\\s+0\\s+0\\s+0\\s+bootstrap\\s+\\S+$`,
      ),
    );
    const json = JSON.parse((await ctl(stack, 'quota', 'list', '-o', 'json')).stdout);
    assert.equal(json[0].scope, teamKey);
  });

  it('previews a change without making it', async () => {
    const preview = await ctl(stack, 'quota', 'preview', 'team:ml', '--limit', 'gpus=4');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(
      preview.stdout,
      new RegExp(`^if set, the quota of ${teamKey} would:\n  make borrowed:  no replica\n`),
    );
    const json = JSON.parse(
      (await ctl(stack, 'quota', 'preview', 'team:ml', '--limit', 'gpus=4', '-o', 'json')).stdout,
    );
    assert.deepEqual(json.blocked_models, []);
    const [stored] = (await stack.call('GET', '/api/v1/quotas')).body;
    assert.deepEqual(stored.limit, { gpus: 16 }, 'unchanged');
  });

  it('exits 1 with the server sentence when the server refuses the quota', async () => {
    const above = await ctl(stack, 'quota', 'set', 'team:ml', '--guarantee', 'gpus=8', '--limit', 'gpus=4');
    assert.equal(above.code, 1);
    const direct = await stack.call('PUT', '/api/v1/quotas', {
      scope: 'team:ml',
      guarantee: { gpus: 8 },
      limit: { gpus: 4 },
    });
    assert.equal(direct.status, 400);
    assert.equal(above.stderr, `${direct.body.error}\n`);
    const nobody = await ctl(stack, 'quota', 'set', 'team:nobody', '--limit', 'gpus=1');
    assert.equal(nobody.code, 1);
    assert.equal(nobody.stderr, 'there is no team "nobody"\n');
    const fractional = await ctl(stack, 'quota', 'set', 'team:ml', '--limit', 'gpus=1.5');
    assert.equal(fractional.code, 1);
    assert.match(fractional.stderr, /gpus must be a whole number/);
  });

  it('exits 2 on resources it cannot read or a quota with neither guarantee nor limit', async () => {
    const unknown = await ctl(stack, 'quota', 'set', 'team:ml', '--limit', 'tpus=4');
    assert.equal(unknown.code, 2);
    assert.match(unknown.stderr, /--limit unknown dimension "tpus" \(gpus, cores, memory_gib\)/);
    const notNumber = await ctl(stack, 'quota', 'set', 'team:ml', '--limit', 'gpus=many');
    assert.equal(notNumber.code, 2);
    assert.match(notNumber.stderr, /--limit gpus must be a number, not "many"/);
    const nothing = await ctl(stack, 'quota', 'set', 'team:ml');
    assert.equal(nothing.code, 2);
    assert.match(nothing.stderr, /give --guarantee, --limit, both, --priority or --preemption never/);
    const noValue = await ctl(stack, 'quota', 'set', 'team:ml', '--limit');
    assert.equal(noValue.code, 2);
    assert.match(noValue.stderr, /--limit needs a value/);
  });

  it('sets --preemption never, shows it, and refuses any other word with exit 2, changing nothing', async () => {
    const set = await ctl(stack, 'quota', 'set', 'team:ml', '--limit', 'gpus=16', '--preemption', 'never');
    assert.equal(set.code, 0, set.stderr);
    const get = await ctl(stack, 'quota', 'get', 'team:ml');
    assert.match(
      get.stdout.split('\n')[1],
      new RegExp(`^Acme / ml\\s+${teamKey}\\s+-\\s+gpus=16\\s+never\\s`),
    );
    assert.equal(
      JSON.parse((await ctl(stack, 'quota', 'get', 'team:ml', '-o', 'json')).stdout).preemption,
      'never',
    );
    const before = (await stack.call('GET', '/api/v1/quotas')).body;
    const bad = await ctl(stack, 'quota', 'set', 'team:ml', '--limit', 'gpus=4', '--preemption', 'always');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /^llmgw ctl quota set: --preemption always: give never or lower-claim\n/);
    assert.deepEqual((await stack.call('GET', '/api/v1/quotas')).body, before);
    // A whole quota: set again without --preemption, it is back to the default.
    const again = await ctl(
      stack,
      'quota',
      'set',
      'team:ml',
      '--guarantee',
      'gpus=8,cores=64',
      '--limit',
      'gpus=16',
    );
    assert.equal(again.code, 0, again.stderr);
    assert.equal((await stack.call('GET', '/api/v1/quotas')).body[0].preemption, 'lower-claim');
  });

  it('sets --priority, shows it and previews it among the siblings; refuses what is not a whole number with exit 2', async () => {
    const set = await ctl(stack, 'quota', 'set', 'team:ml', '--limit', 'gpus=16', '--priority', '7');
    assert.equal(set.code, 0, set.stderr);
    const get = await ctl(stack, 'quota', 'get', 'team:ml');
    assert.match(
      get.stdout.split('\n')[1],
      new RegExp(`^Acme / ml\\s+${teamKey}\\s+-\\s+gpus=16\\s+lower-claim\\s+7\\s`),
    );
    const preview = await ctl(stack, 'quota', 'preview', 'team:ml', '--priority', '7');
    assert.equal(preview.code, 0, preview.stderr);
    assert.match(
      preview.stdout,
      /\n {2}priority 7 among its siblings: below none; equal to none; above none\n?/,
    );
    for (const wrong of ['high', '1.5', '']) {
      const bad = await ctl(stack, 'quota', 'set', 'team:ml', '--limit', 'gpus=4', '--priority', wrong);
      assert.equal(bad.code, 2, `--priority ${wrong}`);
      assert.match(bad.stderr, /--priority .*: give a whole number, e.g. 10\n|--priority needs a value/);
    }
    const again = await ctl(
      stack,
      'quota',
      'set',
      'team:ml',
      '--guarantee',
      'gpus=8,cores=64',
      '--limit',
      'gpus=16',
    );
    assert.equal(again.code, 0, again.stderr);
    assert.equal((await stack.call('GET', '/api/v1/quotas')).body[0].priority, 0, 'a whole quota: back to 0');
  });

  it('shows one quota, as a table row or JSON', async () => {
    const get = await ctl(stack, 'quota', 'get', 'team:ml');
    assert.equal(get.code, 0, get.stderr);
    const list = await ctl(stack, 'quota', 'list');
    assert.equal(get.stdout, list.stdout, 'the row the list shows');
    const json = JSON.parse((await ctl(stack, 'quota', 'get', 'team:ml', '-o', 'json')).stdout);
    assert.deepEqual(json, (await stack.call('GET', '/api/v1/quotas')).body[0]);
    const none = await ctl(stack, 'quota', 'get', 'org:Acme');
    assert.equal(none.code, 1);
    assert.equal(none.stderr, 'org Acme has no quota\n');
  });

  it('prints the warnings of nested quotas that cannot all be honoured, on set and preview', async () => {
    await stack.call('POST', '/api/v1/projects', { team: 'Acme/ml', name: 'big' });
    const warnings = (stdout: string) => stdout.split('\n').filter((line) => line.startsWith('warning: '));
    const aboveLimit =
      'warning: the guarantee of 20 GPUs is above the limit of 16 GPUs on team Acme / ml, so it can never be used in full';
    const preview = await ctl(stack, 'quota', 'preview', 'project:Acme/ml/big', '--guarantee', 'gpus=20');
    assert.equal(preview.code, 0, preview.stderr);
    const set = await ctl(stack, 'quota', 'set', 'project:Acme/ml/big', '--guarantee', 'gpus=20');
    assert.equal(set.code, 0, set.stderr);
    assert.ok(warnings(set.stdout).includes(aboveLimit), set.stdout);
    assert.deepEqual(warnings(preview.stdout), warnings(set.stdout), 'preview warns as set does');
    // Lowering the team's limit below the project's guarantee is told too, from above.
    const lower = await ctl(
      stack,
      'quota',
      'set',
      'team:Acme/ml',
      '--guarantee',
      'gpus=4',
      '--limit',
      'gpus=4',
    );
    assert.equal(lower.code, 0, lower.stderr);
    assert.ok(
      warnings(lower.stdout).includes(
        'warning: the guarantee of 20 GPUs on project Acme/ml/big is above the limit of 4 GPUs on team Acme / ml, so it can never be used in full',
      ),
      lower.stdout,
    );
    assert.equal((await ctl(stack, 'quota', 'rm', 'project:Acme/ml/big')).code, 0);
  });

  it('removes a quota, and removing none is fine too', async () => {
    const rm = await ctl(stack, 'quota', 'rm', 'team:Acme/ml');
    assert.equal(rm.code, 0, rm.stderr);
    assert.equal(rm.stdout, `removed the quota of team:Acme/ml (${teamKey})\n`);
    assert.deepEqual((await stack.call('GET', '/api/v1/quotas')).body, []);
    const again = await ctl(stack, 'quota', 'rm', 'team:Acme/ml');
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, rm.stdout);
    assert.equal((await ctl(stack, 'quota', 'list')).stdout, 'no quotas\n');
  });
});
