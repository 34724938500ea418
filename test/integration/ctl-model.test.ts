import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runCtlCapturing } from '../../src/cli/ctl/index.ts';
import { ctl } from '../support/ctl.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

const MODELS = `
name: ctlm-chat
owner: team:Acme/ml
priority: 5
min_replicas: 1
max_replicas: 3
profiles:
  - { name: h100, priority: 10, resources: { gpus: 1, cores: 8 }, gpu_model: H100, default_concurrency: 4 }
---
name: ctlm-embed
min_replicas: 0
max_replicas: 1
profiles:
  - { name: cpu, resources: { cores: 4 } }
`;

/*
 * Model names are unique to this file: reconcilers are workflows named reconcile:<model> in the one
 * Temporal namespace all test files share, and another file's "chat" would take this one's signals.
 */
describe('llmgw ctl model, against a running reconciler', () => {
  let stack: Stack;
  let dir: string;
  let teamKey: string;
  const file = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  before(async () => {
    stack = await startStack({
      worker: true,
      nodes: [
        { name: 'gpu-1', capacity: { gpus: 8, cores: 64, memory_gib: 512 }, gpu_model: 'H100', labels: {} },
      ],
    });
    dir = mkdtempSync(join(tmpdir(), 'llmgw-ctl-model-'));
    await stack.call('POST', '/api/v1/orgs', { name: 'Acme' });
    teamKey = `team:${(await stack.call('POST', '/api/v1/teams', { org: 'Acme', name: 'ml' })).body.id}`;
  });
  after(() => stack.stop());

  it('applies a YAML file of models, one per document', async () => {
    const applied = await ctl(stack, 'model', 'apply', '-f', file('models.yaml', MODELS));
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(applied.stdout, 'model ctlm-chat created\nmodel ctlm-embed created\n');
    const again = await ctl(stack, 'model', 'apply', '-f', join(dir, 'models.yaml'));
    assert.equal(again.stdout, 'model ctlm-chat updated\nmodel ctlm-embed updated\n');
  });

  it('lists models, and shows one with its profiles, replicas and decisions once its reconciler placed it', async () => {
    await eventually('a ready replica of ctlm-chat', async () => {
      const replicas = (await stack.call('GET', '/api/v1/replicas?model=ctlm-chat')).body;
      return replicas.length === 1 && replicas[0].state === 'ready';
    });
    const list = await ctl(stack, 'model', 'list');
    assert.equal(list.code, 0, list.stderr);
    const [header, ...rows] = list.stdout.trimEnd().split('\n');
    assert.match(
      header,
      /^NAME\s+OWNER\s+PRIORITY\s+REPLICAS\s+IN_FLIGHT\s+CAPACITY_AT_SLO\s+STATUS\s+LAST_DECISION$/,
    );
    assert.match(
      rows.find((r) => r.startsWith('ctlm-chat')) ?? '',
      /^ctlm-chat\s+Acme \/ ml\s+5\s+1 ready\s+-\s+4\s+\S+/,
    );
    assert.match(rows.find((r) => r.startsWith('ctlm-embed')) ?? '', /^ctlm-embed\s+-\s+0\s+none\s/);
    // In a terminal 100 wide, the newest decision is cut to fit (it stays whole in -o json).
    const narrow = await runCtlCapturing(
      ['--server', stack.url, '--token', stack.adminToken, 'model', 'list'],
      { COLUMNS: '100' },
    );
    const lines = narrow.stdout.trimEnd().split('\n');
    assert.deepEqual(
      lines.filter((line) => line.length > 100),
      [],
    );
    assert.match(lines.find((r) => r.startsWith('ctlm-chat')) ?? '', / {2}[a-z][^…]{10,}…$/);
    const get = await ctl(stack, 'model', 'get', 'ctlm-chat');
    assert.equal(get.code, 0, get.stderr);
    assert.match(get.stdout, new RegExp(`^owner:\\s+Acme / ml \\(${teamKey}\\)$`, 'm'));
    assert.match(get.stdout, /^priority:\s+5$/m);
    assert.match(get.stdout, /^replicas:\s+1 ready \(min 1, max 3\)$/m);
    assert.match(get.stdout, /^h100\s+10\s+gpus=1,cores=8\s+H100\s+4\s+-$/m);
    assert.match(get.stdout, /\s+h100\s+gpu-1\s+ready\s+gpus=1,cores=8\s/);
    assert.match(
      get.stdout,
      /^decisions:\nAT\s+ACTION\s+PROFILE\s+NODE\s+REASON\n(.+\n)*\S+\s+place\s+h100\s+gpu-1\s+scale up/m,
    );
  });

  it('lists decisions newest first, and replicas with whether a guarantee protects them', async () => {
    const decisions = await ctl(stack, 'model', 'decisions', 'ctlm-chat', '--limit', '1', '-o', 'json');
    assert.equal(decisions.code, 0, decisions.stderr);
    const parsed = JSON.parse(decisions.stdout);
    assert.equal(parsed.length, 1);
    assert.ok(parsed[0].reason.length > 0);
    const replicas = await ctl(stack, 'replicas', '--model', 'ctlm-chat');
    assert.equal(replicas.code, 0, replicas.stderr);
    assert.match(
      replicas.stdout,
      /^ID\s+MODEL\s+PROFILE\s+NODE\s+STATE\s+PROTECTED\s+RESOURCES\s+CREATED_AT\s+REASON\n/,
    );
    // The reason column says why the replica is there (its placement) or why it ended.
    assert.match(
      replicas.stdout,
      /^\S+\s+ctlm-chat\s+h100\s+gpu-1\s+ready\s+no\s+gpus=1,cores=8\s+\S+\s+scale up: .+$/m,
    );
    const table = await ctl(stack, 'model', 'decisions', 'ctlm-chat');
    assert.match(table.stdout, /^AT\s+ACTION\s+PROFILE\s+NODE\s+REASON\n/);
  });

  it('reports load as a gateway does', async () => {
    const load = await ctl(
      stack,
      'model',
      'load',
      'ctlm-chat',
      '--in-flight',
      '3',
      '--waiting',
      '1',
      '--source',
      'gw-1',
    );
    assert.equal(load.code, 0, load.stderr);
    assert.equal(load.stdout, 'reported 3 in flight, 1 waiting for ctlm-chat from gw-1\n');
    const [model] = (await stack.call('GET', '/api/v1/models')).body.filter(
      (m: { name: string }) => m.name === 'ctlm-chat',
    );
    assert.equal(model.in_flight, 4);
    const unknown = await ctl(stack, 'model', 'load', 'nope', '--in-flight', '1');
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr, 'there is no model "nope"\n');
    const negative = await ctl(stack, 'model', 'load', 'ctlm-chat', '--in-flight', '-1');
    assert.equal(negative.code, 2);
  });

  it('sizes a model for a throughput, and with --apply makes it the target', async () => {
    const measured = await stack.call('PUT', '/api/v1/measurements', {
      model: 'ctlm-chat',
      profile: 'h100',
      max_concurrency_at_slo: 4,
      throughput_tok_per_sec: 200,
      slo: { tpot_p95_ms: 50 },
    });
    assert.equal(measured.status, 200, JSON.stringify(measured.body));
    const plan = await ctl(stack, 'model', 'target', 'ctlm-chat', '--tokens-per-sec', '500');
    assert.equal(plan.code, 0, plan.stderr);
    assert.match(plan.stdout, /^PROFILE\s+REPLICAS\s+TOKENS_PER_SEC\nh100\s+2\s+400\n/);
    assert.match(plan.stdout, /^reaches 600 of 500 tokens\/s: fits$/m);
    assert.match(plan.stdout, /nothing changed; --apply makes it the target\n$/);
    const applied = await ctl(
      stack,
      'model',
      'target',
      'ctlm-chat',
      '--tokens-per-sec',
      '500',
      '--apply',
      '-o',
      'json',
    );
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(JSON.parse(applied.stdout).fits, true);
    const model = JSON.parse((await ctl(stack, 'model', 'get', 'ctlm-chat', '-o', 'json')).stdout);
    assert.equal(model.target_tokens_per_sec, 500);
    const missing = await ctl(stack, 'model', 'target', 'ctlm-chat');
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /model target needs --tokens-per-sec/);
    const notNumber = await ctl(stack, 'model', 'target', 'ctlm-chat', '--tokens-per-sec', 'lots');
    assert.equal(notNumber.code, 2);
    assert.match(notNumber.stderr, /--tokens-per-sec lots: not a number/);
  });

  it('sets and clears the owner', async () => {
    const cleared = await ctl(stack, 'model', 'owner', 'ctlm-chat', '--clear');
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.equal(cleared.stdout, 'model ctlm-chat has no owner\n');
    const set = await ctl(stack, 'model', 'owner', 'ctlm-chat', 'team:Acme/ml');
    assert.equal(set.stdout, `model ctlm-chat is owned by team Acme / ml (${teamKey})\n`);
    const both = await ctl(stack, 'model', 'owner', 'ctlm-chat', 'team:Acme/ml', '--clear');
    assert.equal(both.code, 2);
    assert.match(both.stderr, /give either SCOPE or --clear/);
    const nobody = await ctl(stack, 'model', 'owner', 'ctlm-chat', 'team:nobody');
    assert.equal(nobody.code, 1);
    assert.equal(nobody.stderr, 'there is no team "nobody"\n');
  });

  it('moves a model under an owner at its limit, printing the warning; apply keeps that owner', async () => {
    await stack.call('POST', '/api/v1/teams', { org: 'Acme', name: 'full' });
    const quota = await stack.call('PUT', '/api/v1/quotas', { scope: 'team:Acme/full', limit: { cores: 2 } });
    assert.equal(quota.status, 200, JSON.stringify(quota.body));
    const moved = await ctl(stack, 'model', 'owner', 'ctlm-embed', 'team:Acme/full');
    assert.equal(moved.code, 0, moved.stderr);
    const fullKey = (await stack.call('GET', '/api/v1/models/ctlm-embed')).body.owner;
    assert.equal(
      moved.stdout,
      `model ctlm-embed is owned by team Acme / full (${fullKey})\n` +
        'warning: limit of team Acme / full: holds 0 cores + 4 > 2, so ctlm-embed starts no new replica of cpu under this owner\n',
    );
    // The file gives no owner: the one just set stays, and the answer warns of nothing (not moved).
    const applied = await ctl(stack, 'model', 'apply', '-f', join(dir, 'models.yaml'));
    assert.equal(applied.stdout, 'model ctlm-chat updated\nmodel ctlm-embed updated\n');
    assert.equal((await stack.call('GET', '/api/v1/models/ctlm-embed')).body.owner, fullKey);
    const named = await ctl(
      stack,
      'model',
      'apply',
      '-f',
      file('owned.yaml', `${MODELS.split('---')[1]}owner: team:Acme/full\n`),
    );
    assert.equal(named.stdout, 'model ctlm-embed updated\n');
  });

  it('clears the target throughput', async () => {
    const cleared = await ctl(stack, 'model', 'target', 'ctlm-chat', '--clear');
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.equal(cleared.stdout, 'ctlm-chat has no target throughput\n');
    assert.equal((await stack.call('GET', '/api/v1/models/ctlm-chat')).body.target_tokens_per_sec, undefined);
    assert.equal(
      (await ctl(stack, 'model', 'target', 'ctlm-chat', '--clear')).code,
      0,
      'clearing again is fine',
    );
    const both = await ctl(stack, 'model', 'target', 'ctlm-chat', '--clear', '--tokens-per-sec', '5');
    assert.equal(both.code, 2);
    assert.match(both.stderr, /give either --tokens-per-sec \(with --apply or not\) or --clear/);
  });

  it('exits 1 with the server sentence for a model it refuses or does not know', async () => {
    const unknown = await ctl(stack, 'model', 'get', 'nope');
    assert.equal(unknown.code, 1);
    assert.equal(unknown.stderr, 'there is no model "nope"\n');
    const invalid = await ctl(stack, 'model', 'apply', '-f', file('bad.yaml', 'name: bad\nprofiles: []\n'));
    assert.equal(invalid.code, 1);
    const direct = await stack.call('PUT', '/api/v1/models/bad', { profiles: [] });
    assert.equal(invalid.stderr, `${direct.body.error}\n`);
    const before = (await stack.call('GET', '/api/v1/models/ctlm-chat')).body;
    const ranked = await ctl(
      stack,
      'model',
      'apply',
      '-f',
      file('ranked.yaml', MODELS.split('---')[0].replace('priority: 5', 'priority: high')),
    );
    assert.equal(ranked.code, 1);
    assert.equal(ranked.stderr, 'priority must be a number\n');
    const huge = await ctl(
      stack,
      'model',
      'apply',
      '-f',
      file('huge.yaml', MODELS.split('---')[0].replace('priority: 5', 'priority: 2000000')),
    );
    assert.equal(huge.code, 1);
    assert.equal(huge.stderr, 'priority must be between -1000000 and 1000000\n');
    assert.equal((await stack.call('GET', '/api/v1/models/ctlm-chat')).body.priority, before.priority);
    const nameless = await ctl(stack, 'model', 'apply', '-f', file('nameless.yaml', 'max_replicas: 1\n'));
    assert.equal(nameless.code, 1);
    assert.match(nameless.stderr, /nameless.yaml: document 1 has no name/);
  });

  it('deletes a model', async () => {
    const rm = await ctl(stack, 'model', 'rm', 'ctlm-embed');
    assert.equal(rm.code, 0, rm.stderr);
    assert.equal(
      rm.stdout,
      'deleting model ctlm-embed: its replicas drain and stop, then its reconciler ends\n',
    );
  });
});
