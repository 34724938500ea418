// Pages drawn from API answers given here, with no store and no server: what each shows of them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Api } from '../../../src/console/api-client.ts';
import { modelPage } from '../../../src/console/model-page.tsx';
import { nodesPage } from '../../../src/console/nodes-page.tsx';
import type { PageContext } from '../../../src/console/page-context.ts';
import { type TreeNode, treePage } from '../../../src/console/tree-page.tsx';
import type { Identity } from '../../../src/contracts/permissions.ts';

const viewer: Identity = { name: 'v', role: 'viewer', scope: null, models: null };
const admin: Identity = { name: 'a', role: 'admin', scope: null, models: null };

/** A page context whose API answers GET (or POST) `path` with `answers[path]`, for `who` asking `query`. */
function contextAnswering(
  answers: Record<string, unknown>,
  { who = viewer, query = {} }: { who?: Identity; query?: Record<string, string> } = {},
): PageContext {
  const get = async (path: string) => {
    if (!(path in answers)) throw new Error(`unexpected call of ${path}`);
    return answers[path];
  };
  return {
    api: { get, post: get } as unknown as Api,
    viewer: { who, described: who.role },
    query,
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

describe('the Tree page, a dimension without a quota', () => {
  it('draws no bar, which would be full of its own holds, but says so beside the figures', async () => {
    const page = await html(
      await treePage(
        contextAnswering({
          '/api/v1/tree': [scope('ml', { limit: { cores: 64 } }, { gpus: 12, cores: 16, memory_gib: 0 })],
        }),
      ),
    );
    const row = (d: string) => page.match(new RegExp(`data-dimension="${d}".*?class="figures"`))?.[0] ?? '';
    assert.doesNotMatch(row('gpus'), /class="meter"/);
    assert.match(row('gpus'), /no guarantee or limit/);
    assert.match(page, /holds 12 GPUs/);
    assert.match(row('cores'), /class="meter".*width:25%/);
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

describe("a model's page", () => {
  const model = {
    name: 'chat',
    owner: '',
    owner_name: null,
    priority: 0,
    min_replicas: 1,
    max_replicas: 4,
    replicas: { ready: 2 },
    in_flight: 10,
    load_reported_at: null,
    capacity_at_slo: 32,
    status: 'ok',
    last_decision: null,
    freshness: null,
    profiles: [{ name: 'vllm-h100', priority: 1, resources: { gpus: 1 } }],
  };
  const page = (plan: unknown) =>
    modelPage(
      contextAnswering(
        {
          '/api/v1/models/chat': model,
          '/api/v1/models/chat/decisions?limit=50': [],
          '/api/v1/replicas?model=chat': [],
          '/api/v1/measurements?model=chat': [],
          '/api/v1/models/chat/target': plan,
        },
        { who: admin, query: { tokens_per_sec: '5000' } },
      ),
      'chat',
    ).then(html);

  it("previews a plan in llmgw ctl model target's words: no replica to add, and what blocked on a line of its own", async () => {
    const shown = await page({
      plan: [],
      reaches_tokens_per_sec: 6400,
      fits: true,
      blocked_by: ['no room for profile vllm-h100'],
    });
    assert.match(shown, /no replica to add/);
    assert.match(shown, /<li>reaches 6400 of 5000 tokens\/s: fits<\/li>/);
    assert.match(shown, /<li>blocked by: no room for profile vllm-h100<\/li>/);
    assert.doesNotMatch(shown, /fits: no room/);
  });

  it('lists each step and what it preempts', async () => {
    const shown = await page({
      plan: [{ profile: 'vllm-h100', replicas: 2, tokens_per_sec: 1999.96, preempts: ['embed-1'] }],
      reaches_tokens_per_sec: 2000,
      fits: false,
      blocked_by: [],
    });
    assert.match(shown, /<li>2 of vllm-h100: 1999.96 tokens\/s<\/li>/);
    assert.match(shown, /vllm-h100 preempts embed-1 \(replicas of a lower claim\)/);
    assert.match(shown, /reaches 2000 of 5000 tokens\/s: does not fit/);
    assert.doesNotMatch(shown, /no replica to add/);
  });

  it("shows the model's warnings, such as a profile kept on an inline engine", async () => {
    const warning = 'profile "vllm-h100" runs an inline command engine, which only an admin may change';
    const shown = await modelPage(
      contextAnswering({
        '/api/v1/models/chat': { ...model, warnings: [warning] },
        '/api/v1/models/chat/decisions?limit=50': [],
        '/api/v1/replicas?model=chat': [],
        '/api/v1/measurements?model=chat': [],
      }),
      'chat',
    ).then(html);
    assert.match(
      shown,
      /<p class="warning">profile &quot;vllm-h100&quot; runs an inline command engine, which only an admin may change<\/p>/,
    );
  });

  it('marks Models as the current page in the menu', async () => {
    const shown = await page({ plan: [], reaches_tokens_per_sec: 0, fits: false, blocked_by: [] });
    assert.match(shown, /<a href="\/ui\/models" aria-current="page">Models<\/a>/);
  });
});
