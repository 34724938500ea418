// The cluster (API.md "Cluster": nodes and replicas) against a real Postgres: add/update nodes, what
// run, reserve and have free, cordon, delete, and the replica list with its filters and `protected`.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Resources } from '../../src/domain/resources.ts';
import { newId } from '../../src/store/ids.ts';
import { assertError } from '../support/assertions.ts';
import { type Answer, type Stack, startStack } from '../support/stack.ts';

describe('cluster API', () => {
  let stack: Stack;
  // Model names reach Temporal workflow IDs, which outlive this file's stack: keep them unique.
  const tag = newId().slice(0, 6);

  before(async () => {
    stack = await startStack();
  });
  after(() => stack.stop());

  const putNode = (name: string, body: unknown, headers?: Record<string, string>) =>
    stack.call('PUT', `/api/v1/nodes/${name}`, body, headers);
  const nodes = async () => {
    const answer = await stack.call('GET', '/api/v1/nodes');
    assert.equal(answer.status, 200);
    return answer.body as any[];
  };
  const nodeOf = async (name: string) => (await nodes()).find((node) => node.name === name);
  let seconds = 0;
  /** A replica row as the worker would write it, each newer than the one before. */
  const replica = async (id: string, model: string, node: string, resources: Resources, state = 'ready') => {
    const createdAt = new Date(Date.UTC(2024, 0, 1, 0, 0, seconds++));
    await stack.sql`
      insert into replicas (id, model, profile, node, resources, state, created_at)
      values (${id}, ${model}, 'p', ${node}, ${stack.sql.json(resources)}, ${state}, ${createdAt})`;
  };
  const setState = (id: string, state: string) =>
    stack.sql`update replicas set state = ${state} where id = ${id}`;

  describe('nodes', () => {
    it('PUT /api/v1/nodes/{name} -> 201 when new, 200 when updated; GET shows it', async () => {
      const created = await putNode('gpu-1', {
        capacity: { gpus: 8, cores: 64, memory_gib: 512 },
        gpu_model: 'H100',
        labels: { zone: 'a' },
      });
      assert.deepEqual(created, { status: 201, body: { name: 'gpu-1' } });
      assert.deepEqual(await nodeOf('gpu-1'), {
        name: 'gpu-1',
        capacity: { gpus: 8, cores: 64, memory_gib: 512 },
        allocated: { gpus: 0, cores: 0, memory_gib: 0 },
        reserved: { gpus: 0, cores: 0, memory_gib: 0 },
        free: { gpus: 8, cores: 64, memory_gib: 512 },
        overcommitted: false,
        gpu_model: 'H100',
        labels: { zone: 'a' },
        state: 'ready',
        driver: 'sim',
        heartbeat_at: null,
        address: null,
        replicas: 0,
      });
      const updated = await putNode('gpu-1', { capacity: { gpus: 4, cores: 32, memory_gib: 256 } });
      assert.deepEqual(updated, { status: 200, body: { name: 'gpu-1' } });
      const node = await nodeOf('gpu-1');
      assert.deepEqual(node.capacity, { gpus: 4, cores: 32, memory_gib: 256 });
      assert.equal(node.gpu_model, null);
      assert.deepEqual(node.labels, {});
    });

    it('GET /api/v1/nodes shows what runs apart from what is reserved, and the rest as free', async () => {
      await putNode('gpu-2', { capacity: { gpus: 8, cores: 64, memory_gib: 512 }, gpu_model: 'A100' });
      await replica('alloc-1', 'm', 'gpu-2', { gpus: 2, memory_gib: 100 });
      await replica('alloc-2', 'm', 'gpu-2', { gpus: 1, cores: 4.5 }, 'draining');
      await replica('alloc-3', 'm', 'gpu-2', { gpus: 4 }, 'stopped');
      await replica('alloc-4', 'm', 'gpu-2', { gpus: 4 }, 'failed');
      await replica('alloc-5', 'm', 'elsewhere', { gpus: 4 });
      await replica('alloc-6', 'm', 'gpu-2', { gpus: 1 }, 'pending');
      const node = await nodeOf('gpu-2');
      assert.deepEqual(node.allocated, { gpus: 3, cores: 4.5, memory_gib: 100 });
      assert.deepEqual(node.reserved, { gpus: 1, cores: 0, memory_gib: 0 });
      assert.deepEqual(node.free, { gpus: 4, cores: 59.5, memory_gib: 412 });
      assert.equal(node.overcommitted, false);
      assert.equal(node.replicas, 3);
    });

    it('GET /api/v1/nodes says a node is overcommitted when what runs exceeds its capacity', async () => {
      await putNode('gpu-over', { capacity: { gpus: 2, cores: 8, memory_gib: 64 } });
      await replica('over-1', 'm', 'gpu-over', { gpus: 2 }, 'draining');
      await replica('over-2', 'm', 'gpu-over', { gpus: 1 }, 'pending');
      assert.equal(
        (await nodeOf('gpu-over')).overcommitted,
        false,
        'a reservation beside a drain runs nothing',
      );
      await setState('over-2', 'starting');
      assert.equal((await nodeOf('gpu-over')).overcommitted, true);
      for (const id of ['over-1', 'over-2']) await setState(id, 'stopped');
    });

    it('409 when the capacity would drop below what its replicas hold, and the node is unchanged', async () => {
      await putNode('gpu-3', { capacity: { gpus: 8, cores: 64, memory_gib: 512 } });
      await replica('held-1', 'm', 'gpu-3', { gpus: 4, memory_gib: 300 });
      const before = await nodeOf('gpu-3');
      assertError(
        await putNode('gpu-3', { capacity: { gpus: 2, cores: 64, memory_gib: 512 } }),
        409,
        "node gpu-3's replicas hold 4 GPUs, more than the capacity given",
      );
      assertError(
        await putNode('gpu-3', { capacity: { gpus: 8, cores: 64, memory_gib: 256 } }),
        409,
        /hold 300 GiB/,
      );
      // A dimension left out is no capacity at all: leaving out the GPUs its replicas hold is refused too.
      assertError(
        await putNode('gpu-3', { capacity: { cores: 64, memory_gib: 512 } }),
        409,
        "node gpu-3's replicas hold 4 GPUs, more than the capacity given",
      );
      assert.deepEqual(await nodeOf('gpu-3'), before);
      // Down to exactly what they hold is fine.
      assert.equal(
        (await putNode('gpu-3', { capacity: { gpus: 4, cores: 64, memory_gib: 300 } })).status,
        200,
      );
      assert.deepEqual((await nodeOf('gpu-3')).free, { gpus: 0, cores: 64, memory_gib: 0 });
    });

    it('cordon and uncordon -> 200 and the state; 404 for an unknown node', async () => {
      await putNode('gpu-4', { capacity: { gpus: 8 } });
      assert.deepEqual(await stack.call('POST', '/api/v1/nodes/gpu-4/cordon'), {
        status: 200,
        body: { name: 'gpu-4', state: 'cordoned' },
      });
      assert.equal((await nodeOf('gpu-4')).state, 'cordoned');
      // Updating a cordoned node keeps it cordoned.
      assert.equal((await putNode('gpu-4', { capacity: { gpus: 16 } })).status, 200);
      assert.equal((await nodeOf('gpu-4')).state, 'cordoned');
      assert.deepEqual(await stack.call('POST', '/api/v1/nodes/gpu-4/uncordon'), {
        status: 200,
        body: { name: 'gpu-4', state: 'ready' },
      });
      assert.equal((await nodeOf('gpu-4')).state, 'ready');
      assertError(
        await stack.call('POST', '/api/v1/nodes/nowhere/cordon'),
        404,
        'there is no node "nowhere"',
      );
      assertError(
        await stack.call('POST', '/api/v1/nodes/nowhere/uncordon'),
        404,
        'there is no node "nowhere"',
      );
    });

    it('DELETE -> 409 while replicas run there, 200 once they stopped, 404 when unknown', async () => {
      await putNode('gpu-5', { capacity: { gpus: 8 } });
      await replica('busy-1', 'm', 'gpu-5', { gpus: 1 }, 'draining');
      await replica('busy-2', 'm', 'gpu-5', { gpus: 1 }, 'failed');
      assertError(
        await stack.call('DELETE', '/api/v1/nodes/gpu-5'),
        409,
        'replicas still run on node gpu-5; cordon it and wait for them to stop',
      );
      assert.ok(await nodeOf('gpu-5'));
      await setState('busy-1', 'stopped');
      assert.deepEqual(await stack.call('DELETE', '/api/v1/nodes/gpu-5'), {
        status: 200,
        body: { removed: 'gpu-5' },
      });
      assert.equal(await nodeOf('gpu-5'), undefined);
      assertError(await stack.call('DELETE', '/api/v1/nodes/gpu-5'), 404, 'there is no node "gpu-5"');
    });

    it('refuses bad input: resources, unknown fields, names, JSON, content type, 413', async () => {
      await putNode('gpu-6', { capacity: { gpus: 8 } });
      const before = await nodes();
      assertError(
        await putNode('gpu-6', { capacity: { gpus: -1 } }),
        400,
        'capacity.gpus must not be negative',
      );
      assertError(
        await putNode('gpu-6', { capacity: { gpus: 2.5 } }),
        400,
        'capacity.gpus must be a whole number',
      );
      assertError(
        await putNode('gpu-6', { capacity: { gpus: 'eight' } }),
        400,
        'capacity.gpus must be a number',
      );
      assertError(
        await putNode('gpu-6', '{"capacity": {"cores": 1e400}}'),
        400,
        /^capacity\.cores must be a (finite )?number$/,
      );
      assertError(await putNode('gpu-6', {}), 400, 'capacity is required');
      assertError(
        await putNode('gpu-6', { capacity: { gpus: 8 }, state: 'down' }),
        400,
        'unknown field "state"',
      );
      assertError(await putNode('gpu-6', { capacity: { gpu: 8 } }), 400, 'unknown field "gpu" in capacity');
      assertError(await putNode('bad%20node', { capacity: { gpus: 8 } }), 400, /^name must be/);
      assertError(await putNode('gpu-6', '{"capacity": '), 400, /^the request is not valid JSON: /);
      assertError(
        await putNode('gpu-6', 'capacity=1', { 'content-type': 'application/x-www-form-urlencoded' }),
        400,
        /^the request is not valid JSON: /,
      );
      const labels = Object.fromEntries(
        Array.from({ length: 400 }, (_, i) => [`label-${i}`, 'v'.repeat(40)]),
      );
      assertError(await putNode('gpu-6', { capacity: { gpus: 1 }, labels }), 413);
      assert.deepEqual(await nodes(), before);
    });
  });

  describe('replicas', () => {
    let chat: string;
    let embed: string;

    before(async () => {
      chat = `chat-${tag}`;
      embed = `embed-${tag}`;
      assert.equal((await stack.call('POST', '/api/v1/orgs', { name: 'Acme' })).status, 201);
      assert.equal((await stack.call('POST', '/api/v1/teams', { org: 'Acme', name: 'ml' })).status, 201);
      const profiles = [{ name: 'p', resources: { gpus: 1 } }];
      assert.equal(
        (
          await stack.call('PUT', `/api/v1/models/${chat}`, {
            owner: 'team:Acme/ml',
            max_replicas: 4,
            profiles,
          })
        ).status,
        201,
      );
      assert.equal(
        (await stack.call('PUT', `/api/v1/models/${embed}`, { max_replicas: 4, profiles })).status,
        201,
      );
      assert.equal(
        (await stack.call('PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', guarantee: { gpus: 2 } })).status,
        200,
      );
      await putNode('rep-a', { capacity: { gpus: 8 } });
      await putNode('rep-b', { capacity: { gpus: 8 } });
      // Oldest first: c1 and c2 fill the team's guarantee of 2 GPUs; c3 is beyond it; e1 has no owner.
      await replica('c1', chat, 'rep-a', { gpus: 1 });
      await replica('c2', chat, 'rep-b', { gpus: 1 }, 'starting');
      await replica('c3', chat, 'rep-a', { gpus: 1 });
      await replica('e1', embed, 'rep-a', { gpus: 1 });
      await replica('c0', chat, 'rep-b', { gpus: 1 }, 'stopped');
    });

    const ids = (answer: Answer) => answer.body.map((r: any) => r.id);

    it('GET /api/v1/replicas lists every replica with protected, oldest first', async () => {
      const answer = await stack.call('GET', `/api/v1/replicas?model=${chat}`);
      assert.equal(answer.status, 200);
      const byId = Object.fromEntries(answer.body.map((r: any) => [r.id, r]));
      assert.deepEqual(ids(answer), ['c1', 'c2', 'c3', 'c0']);
      assert.deepEqual(byId.c1, {
        id: 'c1',
        model: chat,
        profile: 'p',
        node: 'rep-a',
        resources: { gpus: 1 },
        state: 'ready',
        protected: true,
        created_at: byId.c1.created_at,
        endpoint: null,
        reason: null,
      });
      assert.match(byId.c1.created_at, /^2024-01-01T00:00:\d\d\.000Z$/);
      assert.equal(byId.c2.protected, true);
      assert.equal(byId.c3.protected, false);
      assert.equal(byId.c0.protected, false, 'a stopped replica is protected by nothing');
      const all = await stack.call('GET', '/api/v1/replicas');
      assert.equal(all.body.find((r: any) => r.id === 'e1').protected, false, 'no owner, no guarantee');
    });

    it('filters by model, node and state, together too', async () => {
      assert.deepEqual(ids(await stack.call('GET', `/api/v1/replicas?model=${embed}`)), ['e1']);
      assert.deepEqual(ids(await stack.call('GET', '/api/v1/replicas?node=rep-b')), ['c2', 'c0']);
      assert.deepEqual(ids(await stack.call('GET', '/api/v1/replicas?state=starting')), ['c2']);
      assert.deepEqual(
        ids(await stack.call('GET', `/api/v1/replicas?model=${chat}&node=rep-a&state=ready`)),
        ['c1', 'c3'],
      );
      assert.deepEqual(ids(await stack.call('GET', '/api/v1/replicas?model=nothing')), []);
    });

    it('a guarantee raised through the API protects the replica beyond it', async () => {
      assert.equal(
        (await stack.call('PUT', '/api/v1/quotas', { scope: 'team:Acme/ml', guarantee: { gpus: 3 } })).status,
        200,
      );
      const c3 = (await stack.call('GET', `/api/v1/replicas?model=${chat}`)).body.find(
        (r: any) => r.id === 'c3',
      );
      assert.equal(c3.protected, true);
    });

    it('refuses a bad filter with 400', async () => {
      assertError(await stack.call('GET', '/api/v1/replicas?state=running'), 400, /^state /);
      assertError(await stack.call('GET', '/api/v1/replicas?owner=x'), 400, 'unknown field "owner"');
    });
  });
});
