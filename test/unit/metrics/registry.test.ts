import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Registry } from 'prom-client';
import type { Decision } from '../../../src/domain/decision.ts';
import { DEFAULT_POLICY_SETTINGS } from '../../../src/domain/snapshot.ts';
import { apiMetrics } from '../../../src/metrics/api-metrics.ts';
import { PolicyAge } from '../../../src/metrics/policy-age.ts';
import { createMetrics, type Metrics } from '../../../src/metrics/registry.ts';
import type { StateFigures } from '../../../src/metrics/state-gauge-definitions.ts';
import { stateGauges } from '../../../src/metrics/state-gauges.ts';
import { workerMetrics } from '../../../src/metrics/worker-metrics.ts';
import { type Sql, StoreUnavailable } from '../../../src/store/db.ts';

const noFigures = (): StateFigures => ({
  llmgw_quota_guarantee: [],
  llmgw_quota_limit: [],
  llmgw_quota_holds: [],
  llmgw_quota_borrowed: [],
  llmgw_model_replicas: [],
  llmgw_model_in_flight: [],
  llmgw_model_capacity_at_slo: [],
  llmgw_model_pending: [],
  llmgw_model_blocked_by_limit: [],
  llmgw_cluster_capacity: [],
  llmgw_cluster_guaranteed: [],
  llmgw_node_overcommitted: [],
  llmgw_node_state: [],
  llmgw_node_heartbeat_age_seconds: [],
});

/** Value of one sample of a metric, by labels; undefined when absent. */
async function sample(registry: Registry, name: string, labels: Record<string, string> = {}) {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
  const found = (metric?.values ?? []).find((v) =>
    Object.entries(labels).every(([k, want]) => String(v.labels[k]) === want),
  );
  return found?.value;
}

const decision = (extra: Partial<Decision> = {}): Decision =>
  ({
    model: 'chat',
    action: 'place',
    reason: '',
    rejected: [],
    inputs: {},
    memory: {},
    ...extra,
  }) as Decision;

describe('state gauges', () => {
  it('take their samples from the figures of the scrape, and have none without', async () => {
    let figures: StateFigures | null = {
      ...noFigures(),
      llmgw_quota_holds: [{ labels: { scope: 'team:a', name: 'A / a', resource: 'gpus' }, value: 3 }],
      llmgw_cluster_capacity: [{ labels: { resource: 'gpus' }, value: 8 }],
    };
    const registry = stateGauges(() => figures);
    const text = await registry.metrics();
    assert.match(text, /^llmgw_quota_holds\{scope="team:a",name="A \/ a",resource="gpus"\} 3$/m);
    assert.match(text, /^llmgw_cluster_capacity\{resource="gpus"\} 8$/m);
    figures = null;
    assert.equal(await sample(registry, 'llmgw_cluster_capacity', { resource: 'gpus' }), undefined);
  });

  it("the API's scrape counts a store that fails in the same scrape and keeps the other metrics", async () => {
    const metrics = createMetrics();
    metrics.decisions.inc({ model: 'chat', action: 'place' });
    const down = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const sql = (() => {
      throw down;
    }) as unknown as Sql;
    const api = apiMetrics({ sql, policy: DEFAULT_POLICY_SETTINGS }, metrics);
    const text = await api.scrape();
    assert.match(text, /^llmgw_store_errors_total\{op="metrics_scrape"\} 1$/m);
    assert.match(text, /^llmgw_reconcile_decisions_total\{model="chat",action="place"\} 1$/m);
    assert.doesNotMatch(text, /^llmgw_quota_holds\{/m);
  });

  it("a failure that is not the store's is not hidden as one", async () => {
    const sql = (() => {
      throw new TypeError('a bug');
    }) as unknown as Sql;
    await assert.rejects(
      apiMetrics({ sql, policy: DEFAULT_POLICY_SETTINGS }, createMetrics()).scrape(),
      /a bug/,
    );
  });
});

describe("the worker's hooks", () => {
  const fresh = (): [Metrics, ReturnType<typeof workerMetrics>] => {
    const metrics = createMetrics();
    return [metrics, workerMetrics(metrics)];
  };

  it('count decisions by model and action and time the passes', async () => {
    const [metrics, hooks] = fresh();
    hooks.activityHooks.onDecision(decision(), 0.02);
    hooks.activityHooks.onDecision(decision({ action: 'none' }), 0.3);
    assert.equal(await sample(metrics.registry, 'llmgw_reconcile_decisions_total', { action: 'place' }), 1);
    assert.equal(await sample(metrics.registry, 'llmgw_reconcile_decisions_total', { action: 'none' }), 1);
    const count = (await metrics.passSeconds.get()).values.find((v) => v.metricName?.endsWith('_count'));
    assert.equal(count?.value, 2);
  });

  it('count reclaimed replicas by the scope they came from and the one they went to', async () => {
    const [metrics, hooks] = fresh();
    const victim = (replica: string, owner: string | null) =>
      ({ replica, model: 'web', owner, node: 'n', resources: {} }) as NonNullable<
        Decision['victims']
      >[number];
    hooks.activityHooks.onVictims(
      decision({
        action: 'reclaim',
        reclaim_for: 'team:ml',
        victims: [victim('a', 'team:web'), victim('b', 'team:web'), victim('c', null)],
      }),
    );
    const reclaims = (labels: Record<string, string>) =>
      sample(metrics.registry, 'llmgw_reclaims_total', labels);
    assert.equal(await reclaims({ from_scope: 'team:web', for_scope: 'team:ml' }), 2);
    assert.equal(await reclaims({ from_scope: 'none', for_scope: 'team:ml' }), 1);
  });

  it('count preempted replicas by the scope they came from and their tier, apart from reclaims', async () => {
    const [metrics, hooks] = fresh();
    const victim = (replica: string, owner: string | null, tier: 'surplus' | 'demand') =>
      ({
        replica,
        model: 'web',
        owner,
        node: 'n',
        resources: {},
        claim: { priority: 0, tier, k: 2, of: 1 },
      }) as NonNullable<Decision['victims']>[number];
    hooks.activityHooks.onVictims(
      decision({
        action: 'preempt',
        victims: [
          victim('a', 'team:web', 'surplus'),
          victim('b', 'team:web', 'surplus'),
          victim('c', null, 'demand'),
        ],
      }),
    );
    const preemptions = (labels: Record<string, string>) =>
      sample(metrics.registry, 'llmgw_preemptions_total', labels);
    assert.equal(await preemptions({ from_scope: 'team:web', tier: 'surplus' }), 2);
    assert.equal(await preemptions({ from_scope: 'none', tier: 'demand' }), 1);
    assert.equal(await sample(metrics.registry, 'llmgw_reclaims_total'), undefined, 'no reclaim counted');
  });

  it('count store failures of activities by name, from zero, and pass everything else through', async () => {
    const [metrics, hooks] = fresh();
    const activities = hooks.countStoreErrors({
      planPass: async (input: { fail?: 'store' | 'other' }) => {
        if (input.fail === 'store') throw new StoreUnavailable(new Error('ECONNREFUSED'));
        if (input.fail === 'other') throw new Error('bad input');
        return 'planned';
      },
    });
    const errors = () => sample(metrics.registry, 'llmgw_store_errors_total', { op: 'planPass' });
    assert.equal(await errors(), 0);
    assert.equal(await activities.planPass({}), 'planned');
    await assert.rejects(activities.planPass({ fail: 'store' }), StoreUnavailable);
    await assert.rejects(activities.planPass({ fail: 'other' }), /bad input/);
    assert.equal(await errors(), 1);
  });

  it('count a failed policy re-read as a store error', async () => {
    const [metrics, hooks] = fresh();
    hooks.policyCacheEvents.onStale(new Error('down'), 40_000);
    assert.equal(await sample(metrics.registry, 'llmgw_store_errors_total', { op: 'policy_read' }), 1);
    assert.ok((await sample(metrics.registry, 'llmgw_quota_policy_age_seconds'))! >= 40);
  });
});

describe('quota policy age', () => {
  it('grows from the last good read while re-reads fail, and is 0 once one succeeds', () => {
    let now = 1_000_000;
    const age = new PolicyAge(() => now);
    assert.equal(age.seconds(), 0);
    age.stale(30_000);
    now += 10_000;
    age.stale(40_000); // a later failure does not move the start
    assert.equal(age.seconds(), 40);
    now += 5_000;
    assert.equal(age.seconds(), 45, 'it grows between re-reads too');
    age.read();
    assert.equal(age.seconds(), 0);
  });
});
