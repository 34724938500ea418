// The worker loads LLMGW_SIM_CLUSTER (not only `llmgw dev`), so that a split or compose deployment has
// nodes; several workers loading the same file agree; a lone worker without it says where nodes come from.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadSimCluster } from '../../src/cli/sim-cluster.ts';
import { DEMO_CLUSTER, parseClusterFile } from '../../src/cluster/sim/cluster-file.ts';
import type { Sql } from '../../src/store/db.ts';
import { listNodes } from '../../src/store/nodes.ts';
import { stopOwnServices } from '../support/services.ts';
import { freshStore } from '../support/stack.ts';

const CLUSTER = `
nodes:
  - name: gpu
    count: 3
    gpu_model: H100
    capacity: { gpus: 8, cores: 96, memory_gib: 1024 }
  - name: cpu
    capacity: { cores: 64, memory_gib: 256 }
`;

describe('the simulated cluster a worker starts with', () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmgw-sim-cluster-'));
  const file = join(dir, 'cluster.yaml');
  writeFileSync(file, CLUSTER);
  const stores: Sql[] = [];
  const store = async () => {
    const sql = await freshStore();
    stores.push(sql);
    return sql;
  };
  const lines: string[] = [];
  const log = { info: (line: string) => lines.push(line) };
  before(() => {
    lines.length = 0;
  });
  after(async () => {
    for (const sql of stores) await sql.end({ timeout: 5 });
    await stopOwnServices();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is LLMGW_SIM_CLUSTER's nodes, the same however many workers load the file at once", async () => {
    const sql = await store();
    await Promise.all([1, 2, 3].map(() => loadSimCluster(sql, { file, demoWhenUnset: false, log })));
    const nodes = await listNodes(sql);
    assert.deepEqual(
      nodes.map((node) => [node.name, node.capacity.gpus ?? 0, node.state]),
      [
        ['cpu', 0, 'ready'],
        ['gpu-1', 8, 'ready'],
        ['gpu-2', 8, 'ready'],
        ['gpu-3', 8, 'ready'],
      ],
    );
    assert.ok(lines.includes(`simulated cluster: 4 node(s) from ${file}`), lines.join('\n'));
  });

  it('is none but those registered through the API when unset, and a lone worker says so', async () => {
    const sql = await store();
    lines.length = 0;
    await loadSimCluster(sql, { file: undefined, demoWhenUnset: false, log });
    assert.equal((await listNodes(sql)).length, 0);
    assert.deepEqual(lines, [
      'simulated cluster: only the nodes registered through the API (PUT /api/v1/nodes/{name}); set LLMGW_SIM_CLUSTER to a YAML file of nodes to load them at start',
    ]);
  });

  it('is the built-in demo cluster when unset in `llmgw dev`', async () => {
    const sql = await store();
    await loadSimCluster(sql, { file: undefined, demoWhenUnset: true, log });
    const demo = parseClusterFile(DEMO_CLUSTER).map((node) => node.name);
    assert.deepEqual(
      (await listNodes(sql)).map((node) => node.name),
      demo.sort(),
    );
  });
});
