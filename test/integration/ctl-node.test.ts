import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ctl } from '../support/ctl.ts';
import { type Stack, startStack } from '../support/stack.ts';

const NODES = `
nodes:
  - name: gpu-a
    count: 2
    gpu_model: H100
    capacity: { gpus: 8, cores: 96, memory_gib: 1024 }
  - name: cpu
    capacity: { cores: 64, memory_gib: 256 }
    labels: { zone: b }
`;

describe('llmgw ctl node and replicas', () => {
  let stack: Stack;
  let dir: string;
  before(async () => {
    stack = await startStack();
    dir = mkdtempSync(join(tmpdir(), 'llmgw-ctl-node-'));
  });
  after(() => stack.stop());

  it('applies a cluster file: count expands names, then a second apply updates', async () => {
    const file = join(dir, 'nodes.yaml');
    writeFileSync(file, NODES);
    const applied = await ctl(stack, 'node', 'apply', '-f', file);
    assert.equal(applied.code, 0, applied.stderr);
    assert.equal(applied.stdout, 'node gpu-a-1 created\nnode gpu-a-2 created\nnode cpu created\n');
    const again = await ctl(stack, 'node', 'apply', '-f', file, '-o', 'json');
    assert.deepEqual(JSON.parse(again.stdout), [
      { name: 'gpu-a-1', created: false },
      { name: 'gpu-a-2', created: false },
      { name: 'cpu', created: false },
    ]);
    const cpu = (await stack.call('GET', '/api/v1/nodes')).body.find(
      (n: { name: string }) => n.name === 'cpu',
    );
    assert.deepEqual(cpu.labels, { zone: 'b' });
  });

  it('lists nodes with capacity, what runs, what is reserved and free', async () => {
    const list = await ctl(stack, 'node', 'list');
    assert.equal(list.code, 0, list.stderr);
    const lines = list.stdout.trimEnd().split('\n');
    assert.match(lines[0], /^NAME\s+STATE\s+GPU_MODEL\s+CAPACITY\s+ALLOCATED\s+RESERVED\s+FREE\s+REPLICAS$/);
    assert.ok(
      lines.some((line) =>
        /^gpu-a-1\s+ready\s+H100\s+gpus=8,cores=96,memory_gib=1024\s+gpus=0,cores=0,memory_gib=0\s+gpus=0,cores=0,memory_gib=0\s+gpus=8,cores=96,memory_gib=1024\s+0$/.test(
          line,
        ),
      ),
      list.stdout,
    );
  });

  it('cordons and uncordons a node', async () => {
    const cordon = await ctl(stack, 'node', 'cordon', 'gpu-a-1');
    assert.equal(cordon.code, 0, cordon.stderr);
    assert.equal(cordon.stdout, 'node gpu-a-1 is cordoned\n');
    const nodes = JSON.parse((await ctl(stack, 'node', 'list', '-o', 'json')).stdout);
    assert.equal(nodes.find((n: { name: string }) => n.name === 'gpu-a-1').state, 'cordoned');
    const uncordon = await ctl(stack, 'node', 'uncordon', 'gpu-a-1');
    assert.equal(uncordon.stdout, 'node gpu-a-1 is ready\n');
  });

  it('removes a node, and exits 1 with the server sentence for one that does not exist', async () => {
    const rm = await ctl(stack, 'node', 'rm', 'cpu');
    assert.equal(rm.code, 0, rm.stderr);
    assert.equal(rm.stdout, 'removed node cpu\n');
    const missing = await ctl(stack, 'node', 'rm', 'cpu');
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'there is no node "cpu"\n');
    const cordonMissing = await ctl(stack, 'node', 'cordon', 'nope');
    assert.equal(cordonMissing.code, 1);
    assert.equal(cordonMissing.stderr, 'there is no node "nope"\n');
  });

  it('refuses a cluster file it cannot use (1) and a missing -f (2)', async () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'nodes:\n  - name: x\n');
    const invalid = await ctl(stack, 'node', 'apply', '-f', bad);
    assert.equal(invalid.code, 1);
    assert.match(invalid.stderr, /bad.yaml: nodes.0.capacity/);
    const absent = await ctl(stack, 'node', 'apply', '-f', join(dir, 'absent.yaml'));
    assert.equal(absent.code, 1);
    assert.match(absent.stderr, /^cannot read .*absent.yaml: ENOENT/);
    const noFile = await ctl(stack, 'node', 'apply');
    assert.equal(noFile.code, 2);
    assert.match(noFile.stderr, /node apply needs --file/);
  });

  it('lists replicas (none yet), with the filters passed through', async () => {
    const none = await ctl(stack, 'replicas', '--model', 'chat', '--node', 'gpu-a-1', '--state', 'ready');
    assert.equal(none.code, 0, none.stderr);
    assert.equal(none.stdout, 'no replicas\n');
    const badState = await ctl(stack, 'replicas', '--state', 'sleeping');
    assert.equal(badState.code, 1);
    assert.match(badState.stderr, /state/);
  });

  it("shows a replica's reason: its first line in the table, whole in JSON", async () => {
    const reason = 'the engine exited with signal SIGKILL; its log ends:\nloading model\nserving';
    await stack.sql`insert into replicas (id, model, profile, node, resources, state, reason)
      values ('chat-crashed', 'chat', 'h100', 'gpu-a-1', ${stack.sql.json({ gpus: 1 })}, 'crashed', ${reason})`;
    const table = await ctl(stack, 'replicas', '--state', 'crashed');
    assert.equal(table.code, 0, table.stderr);
    assert.match(
      table.stdout,
      /^ID\s+MODEL\s+PROFILE\s+NODE\s+STATE\s+PROTECTED\s+RESOURCES\s+CREATED_AT\s+REASON\n/,
    );
    assert.match(
      table.stdout,
      /chat-crashed\s+chat\s+h100\s+gpu-a-1\s+crashed\s.*the engine exited with signal SIGKILL; its log ends:\n$/,
    );
    const json = await ctl(stack, 'replicas', '--state', 'crashed', '-o', 'json');
    assert.equal(JSON.parse(json.stdout)[0].reason, reason);
  });
});
