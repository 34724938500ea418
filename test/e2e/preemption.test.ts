// Priority and fair sharing among models (issue 14), through the API with the worker and the simulated
// cluster: POLICY.md "Priority and fair sharing among models".
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import {
  activeReplicas,
  decisionSaying,
  decisions,
  FAST,
  gpuNode,
  gpuProfile,
  ok,
  settledAt,
} from '../support/cluster.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

interface ReplicaRow {
  id: string;
  model: string;
  state: string;
  resources: { gpus?: number };
}

const SERVING = ['pending', 'starting', 'ready'];
const RUNNING = ['starting', 'ready', 'draining'];
const gpusIn = (rows: readonly ReplicaRow[], states: readonly string[]) =>
  rows.filter((r) => states.includes(r.state)).reduce((total, r) => total + (r.resources.gpus ?? 0), 0);
/** llmgw_preemptions_total of a scope as [tier, count]; the counter is the process's, so other stacks' scopes show too. */
const preemptionsOf = (metrics: string, scope: string) =>
  [
    ...metrics.matchAll(
      new RegExp(`^llmgw_preemptions_total\\{from_scope="${scope}",tier="(\\w+)"\\} (\\d+)$`, 'gm'),
    ),
  ].map(([, tier, n]) => [tier, Number(n)]);
const seconds = (since: number) => ((performance.now() - since) / 1000).toFixed(1);

describe('fair sharing: 200 models with min_replicas 2 under a 200-GPU limit', () => {
  const MODELS = 200;
  const names = Array.from({ length: MODELS }, (_, i) => `fair-${i}`);
  let stack: Stack;
  let team: string;
  /**
   * The most GPUs seen held at one look by serving replicas (pending, starting, ready), by running ones
   * (starting, ready, draining) and by all active ones (what the quota's `holds` counts).
   */
  const most = { serving: 0, running: 0, active: 0 };

  before(async () => {
    // 7 nodes of 64 GPUs: room for 448, so only the team's limit stops the models.
    const nodes = Array.from({ length: 7 }, (_, i) => gpuNode(`big-${i}`, 64));
    stack = await startStack({ worker: true, env: FAST, nodes });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Big' });
    team = `team:${(await ok<{ id: string }>(stack, 'POST', '/api/v1/teams', { org: 'Big', name: 'serve' })).id}`;
    await ok(stack, 'PUT', '/api/v1/quotas', { scope: 'team:Big/serve', limit: { gpus: 200 } });
  });
  after(() => stack.stop());

  /** Waits until every model has exactly `n` serving replicas, all ready, and nothing drains; returns the replicas. */
  async function untilEveryModelAt(n: number, timeoutMs: number): Promise<ReplicaRow[]> {
    const deadline = performance.now() + timeoutMs;
    for (;;) {
      const rows = await ok<ReplicaRow[]>(stack, 'GET', '/api/v1/replicas');
      most.serving = Math.max(most.serving, gpusIn(rows, SERVING));
      most.running = Math.max(most.running, gpusIn(rows, RUNNING));
      most.active = Math.max(most.active, gpusIn(rows, [...SERVING, 'draining']));
      const serving = new Map<string, number>();
      for (const r of rows.filter((r) => SERVING.includes(r.state))) {
        serving.set(r.model, (serving.get(r.model) ?? 0) + 1);
      }
      const counts = names.map((name) => serving.get(name) ?? 0);
      const settled = rows.filter((r) => r.state === 'ready').length === MODELS * n;
      if (settled && counts.every((c) => c === n) && !rows.some((r) => r.state === 'draining')) return rows;
      if (performance.now() > deadline) {
        const at = (k: number) => counts.filter((c) => c === k).length;
        throw new Error(
          `not every model at ${n} ready replicas in time: models at 0/1/2 replicas: ${at(0)}/${at(1)}/${at(2)}`,
        );
      }
      // Each look reads every replica, on the cores the worker needs: twice a second is enough.
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  it('ends with exactly one replica each, the limit never passed at any look', async () => {
    const created = performance.now();
    // In batches: 200 requests at once would only queue behind the two cores.
    for (let i = 0; i < MODELS; i += 20) {
      await Promise.all(
        names.slice(i, i + 20).map((name) =>
          ok(stack, 'PUT', `/api/v1/models/${name}`, {
            owner: 'team:Big/serve',
            min_replicas: 2,
            max_replicas: 2,
            profiles: [gpuProfile('h100', 1, { default_concurrency: 1 })],
          }),
        ),
      );
    }
    console.info(`preemption e2e: ${MODELS} models created in ${seconds(created)} s`);

    const shared = performance.now();
    await untilEveryModelAt(1, 200_000);
    console.info(
      `preemption e2e: every model at 1 replica ${seconds(shared)} s later; GPUs held at most: ` +
        `${most.serving} serving, ${most.running} running, ${most.active} active`,
    );
    // Three resyncs later nothing has moved (no wait: the first look must see it).
    await new Promise((resolve) => setTimeout(resolve, 3 * Number(FAST.LLMGW_RESYNC_S) * 1000));
    const rows = await untilEveryModelAt(1, 0);
    assert.ok(
      most.serving <= 200,
      `serving replicas held ${most.serving} GPUs at one look; the limit is 200`,
    );
    assert.ok(
      most.running <= 200,
      `running replicas held ${most.running} GPUs at one look; the limit is 200`,
    );
    // Nothing but a preemption stops a replica here (no load, min = max): each stopped one was a second
    // replica, preempted for a model that had none.
    const stopped = rows.filter((r) => r.state === 'stopped').length;
    // Models created while others already placed may preempt; those created with them place fairly at once.
    assert.deepEqual(preemptionsOf(await stack.scrape(), team), stopped === 0 ? [] : [['floor', stopped]]);
  });

  it('raising the limit to 400 brings every model to 2', async () => {
    const raised = performance.now();
    await ok(stack, 'PUT', '/api/v1/quotas', { scope: 'team:Big/serve', limit: { gpus: 400 } });
    await untilEveryModelAt(2, 120_000);
    console.info(
      `preemption e2e: every model at 2 replicas ${seconds(raised)} s after the limit rose to 400`,
    );
    assert.ok(
      most.serving <= 400,
      `serving replicas held ${most.serving} GPUs at one look; the limit is 400`,
    );
    const quotas = await ok<{ name: string; holds: { gpus: number } }[]>(stack, 'GET', '/api/v1/quotas');
    assert.equal(quotas.find((q) => q.name === 'Big / serve')?.holds.gpus, 400);
  });
});

describe('priority: a higher-priority model under a full limit', () => {
  let stack: Stack;
  const teams: Record<string, string> = {};
  before(async () => {
    stack = await startStack({
      worker: true,
      // Surplus replicas stay (no scale-down in the test's time, load reports do not expire), and a
      // preempted replica drains for 2 s, long enough to see a model wait for it.
      env: { ...FAST, LLMGW_SCALE_DOWN_WINDOW_S: '600', LLMGW_LOAD_STALE_S: '600', LLMGW_DRAIN_GRACE_S: '2' },
      nodes: [gpuNode('gpu-1', 16)],
    });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Prio' });
    for (const name of ['open', 'closed']) {
      const team = await ok<{ id: string }>(stack, 'POST', '/api/v1/teams', { org: 'Prio', name });
      teams[name] = `team:${team.id}`;
    }
    await ok(stack, 'PUT', '/api/v1/quotas', { scope: 'team:Prio/open', limit: { gpus: 6 } });
    await ok(stack, 'PUT', '/api/v1/quotas', {
      scope: 'team:Prio/closed',
      limit: { gpus: 6 },
      preemption: 'never',
    });
  });
  after(() => stack.stop());

  const model = (name: string, owner: string, spec: Record<string, number>) =>
    ok(stack, 'PUT', `/api/v1/models/${name}`, {
      owner,
      profiles: [gpuProfile('h100', 1, { default_concurrency: 1 })],
      ...spec,
    });
  const load = (name: string, inFlight: number) =>
    ok(stack, 'POST', `/api/v1/models/${name}/load`, { in_flight: inFlight });
  const ids = async (name: string) => (await activeReplicas(stack, name)).map((r) => r.id).sort();

  /**
   * The limit of 6 GPUs full: `low` (priority 0, min 1) runs 3 replicas with 0 in flight, so its 2nd
   * and 3rd are surplus; `mid` (priority 1, min 3) runs 3, all floor. Returns low's replicas oldest
   * first, and mid's.
   */
  async function fullLimit(low: string, mid: string, owner: string) {
    await model(low, owner, { priority: 0, min_replicas: 1, max_replicas: 3 });
    await load(low, 3);
    await settledAt(stack, low, 3);
    await load(low, 0);
    await model(mid, owner, { priority: 1, min_replicas: 3, max_replicas: 3 });
    await settledAt(stack, mid, 3);
    const oldestFirst = async (name: string) => {
      const rows = await ok<(ReplicaRow & { created_at: string })[]>(
        stack,
        'GET',
        `/api/v1/replicas?model=${name}&state=ready`,
      );
      return rows.sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
    };
    const [lows, mids] = [await oldestFirst(low), await oldestFirst(mid)];
    assert.equal(lows.length, 3);
    return { lows: lows.map((r) => r.id), mids: mids.map((r) => r.id).sort() };
  }

  it("takes the high-priority model's replicas from the lowest-priority sibling's surplus", async () => {
    const started = performance.now();
    const { lows, mids } = await fullLimit('low', 'mid', 'team:Prio/open');
    await model('high', 'team:Prio/open', { priority: 5, min_replicas: 2, max_replicas: 2 });
    // Known load (none): once its replicas are reserved, high's passes say what they wait for.
    await load('high', 0);

    // While low's replicas drain, high waits for them.
    await eventually('high pending for "preempted" in /metrics', async () =>
      (await stack.scrape()).includes('llmgw_model_pending{model="high",reason="preempted"} 1'),
    );
    await settledAt(stack, 'high', 2);
    console.info(`preemption e2e: the priority scene settled in ${seconds(started)} s`);

    const preempts = (await decisions(stack, 'high')).filter((d) => d.action === 'preempt').reverse();
    assert.deepEqual(
      preempts.map((d) => d.reason.replace(/^.*?; preempted/, 'preempted')),
      [1, 2].map(
        (k, i) =>
          `preempted ${lows[2 - i]} (priority 0, surplus) for high (priority 5, floor ${k} of 2) under the ` +
          'limit of team Prio / open; h100 reserved on gpu-1 starts once it has stopped',
      ),
      "low's surplus replicas, newest first, and nothing else",
    );
    const notes = (await decisions(stack, 'low')).filter((d) => d.action === 'preempted').reverse();
    assert.deepEqual(
      notes.map((d) => d.reason),
      [1, 2].map(
        (k, i) =>
          `preempted for high (priority 5, floor ${k} of 2): replica ${lows[2 - i]} (priority 0, surplus) on gpu-1 drains`,
      ),
    );
    assert.deepEqual(await ids('low'), [lows[0]], 'low keeps its oldest replica, its floor');
    assert.deepEqual(await ids('mid'), mids, 'mid keeps its 3 replicas');
  });

  it('counts the preempted replicas by scope and tier in /metrics, and high no longer waits', async () => {
    const text = await stack.scrape();
    assert.deepEqual(preemptionsOf(text, teams.open), [['surplus', 2]], 'only surplus replicas of team open');
    assert.doesNotMatch(text, /^llmgw_model_pending\{model="high"/m);
  });

  it('preempts nothing under a quota that says "never": high waits for the limit', async () => {
    const { lows, mids } = await fullLimit('low-never', 'mid-never', 'team:Prio/closed');
    await model('high-never', 'team:Prio/closed', { priority: 5, min_replicas: 2, max_replicas: 2 });
    await decisionSaying(stack, 'high-never', /pending: a limit of team Prio \/ closed stops h100$/);
    // Passes later, still nothing preempted.
    await new Promise((resolve) => setTimeout(resolve, 3 * Number(FAST.LLMGW_RESYNC_S) * 1000));
    assert.equal((await ok(stack, 'GET', '/api/v1/models/high-never')).status, 'pending');
    assert.deepEqual(await ids('high-never'), []);
    assert.deepEqual(await ids('low-never'), [...lows].sort(), 'low-never keeps its 3 replicas');
    assert.deepEqual(await ids('mid-never'), mids, 'mid-never keeps its 3 replicas');
    assert.equal((await decisions(stack, 'high-never')).filter((d) => d.action === 'preempt').length, 0);
    assert.equal((await decisions(stack, 'low-never')).filter((d) => d.action === 'preempted').length, 0);
    const text = await stack.scrape();
    assert.deepEqual(preemptionsOf(text, teams.closed), []);
    assert.match(text, /^llmgw_model_pending\{model="high-never",reason="limit"\} 1$/m);
  });
});
