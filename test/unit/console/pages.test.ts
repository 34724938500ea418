// Pages drawn from API answers given here, with no store and no server: what each shows of them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Identity } from '../../../src/api/auth/permissions.ts';
import type { Api } from '../../../src/console/api-client.ts';
import { nodesPage } from '../../../src/console/nodes-page.tsx';
import type { PageContext } from '../../../src/console/page-context.ts';
import { type TreeNode, treePage } from '../../../src/console/tree-page.tsx';

const viewer: Identity = { name: 'v', role: 'viewer', scope: null, models: null };

/** A page context whose API answers GET `path` with `answers[path]`. */
function contextAnswering(answers: Record<string, unknown>): PageContext {
  const get = async (path: string) => {
    if (!(path in answers)) throw new Error(`unexpected GET ${path}`);
    return answers[path];
  };
  return {
    api: { get } as unknown as Api,
    viewer: { who: viewer, described: 'viewer' },
    query: {},
    sql: undefined as never,
    now: Date.UTC(2026, 0, 1),
    status: () => {},
    temporalWorkflows: 'http://temporal/workflows',
  };
}

const html = async (element: unknown) =>
  String(await (element as { toString(): string | Promise<string> }).toString());

const zero = { gpus: 0, cores: 0, memory_gib: 0 };
const scope = (
  name: string,
  quota: TreeNode['quota'],
  holds = zero,
  children: TreeNode[] = [],
): TreeNode => ({
  scope: `team:${name}`,
  kind: 'team',
  name,
  path: `Acme/${name}`,
  quota,
  holds,
  borrowed: zero,
  children,
});

describe('the Tree page', () => {
  it('flags a scope at its limit and one whose children are guaranteed more than it', async () => {
    const full = scope('web', { limit: { gpus: 12 } }, { gpus: 12, cores: 0, memory_gib: 0 });
    const parent = scope('ml', { guarantee: { gpus: 8 } }, zero, [
      scope('a', { guarantee: { gpus: 6 } }),
      scope('b', { guarantee: { gpus: 4, cores: 99 } }),
    ]);
    const page = await html(await treePage(contextAnswering({ '/api/v1/tree': [full, parent] })));
    assert.match(page, /at its limit of 12 GPUs/);
    assert.match(page, /guarantees overcommitted: children guaranteed 10 GPUs of 8 GPUs/);
    // Cores are guaranteed by a child only: the parent sets none, so there is nothing to overcommit.
    assert.doesNotMatch(page, /99 cores of/);
  });

  it('draws a bar only for the dimensions a quota sets or something holds, each figure with its unit', async () => {
    const page = await html(
      await treePage(
        contextAnswering({
          '/api/v1/tree': [scope('ml', { limit: { cores: 0 } }, { ...zero, memory_gib: 64 })],
        }),
      ),
    );
    assert.match(page, /data-dimension="cores"/);
    assert.match(page, /data-dimension="memory_gib"/);
    assert.doesNotMatch(page, /data-dimension="gpus"/);
    assert.match(page, /holds 64 GiB/);
    assert.match(page, /limit 0 cores/);
    // A limit of 0 keeps the scope off cores: holding none, it is at that limit.
    assert.match(page, /at its limit of 0 cores/);
  });
});

describe('the Nodes page', () => {
  it('lists on each node the replicas the API shows, and the figures of all', async () => {
    const node = {
      name: 'n1',
      capacity: { gpus: 8 },
      allocated: { gpus: 6, cores: 0, memory_gib: 0 },
      reserved: { gpus: 2, cores: 0, memory_gib: 0 },
      gpu_model: 'H100',
      state: 'cordoned',
    };
    const replica = {
      id: 'r1',
      model: 'chat',
      profile: 'p',
      node: 'n1',
      state: 'ready',
      resources: {},
      protected: true,
      endpoint: null,
    };
    const page = await html(
      await nodesPage(
        contextAnswering({
          '/api/v1/nodes': [node],
          '/api/v1/replicas': [replica, { ...replica, id: 'r2', state: 'stopped' }],
        }),
      ),
    );
    assert.match(page, /6 GPUs allocated, 2 GPUs reserved, of 8 GPUs/);
    assert.equal(page.match(/href="\/ui\/models\/chat"/g)?.length, 1, 'a stopped replica is not on the node');
    assert.match(page, /cordoned/);
  });
});
