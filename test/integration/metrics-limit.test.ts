// Scopes driven to their limits through the API with a worker: /metrics shows what GET /api/v1/quotas
// reports, the models the limits block, and the reconcilers' counters; a lone worker serves its own.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../src/cli/dev/ports.ts';
import { DIMENSIONS } from '../../src/domain/resources.ts';
import { decisionSaying, FAST, gpuNode, gpuProfile, ok, settledAt } from '../support/cluster.ts';
import { eventually, type Stack, startStack } from '../support/stack.ts';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** The samples of a Prometheus text exposition. */
function parseMetrics(text: string): Sample[] {
  return text
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => {
      const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
      assert.ok(match, `not a sample line: ${line}`);
      const labels: Record<string, string> = {};
      for (const [, key, value] of (match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
        labels[key] = value.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
      }
      return { name: match[1], labels, value: Number(match[3]) };
    });
}

const find = (samples: Sample[], name: string, labels: Record<string, string>) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

interface QuotaRow {
  scope: string;
  name: string;
  guarantee?: Record<string, number>;
  limit?: Record<string, number>;
  holds: Record<string, number>;
  borrowed: Record<string, number>;
}

describe('metrics of scopes at their limits', () => {
  let stack: Stack;
  let workerPort: number;
  before(async () => {
    workerPort = await freePort();
    stack = await startStack({
      worker: true,
      env: { ...FAST, LLMGW_METRICS_PORT: String(workerPort) },
      nodes: [gpuNode('gpu-1', 4)],
    });
    await ok(stack, 'POST', '/api/v1/orgs', { name: 'Acme' });
    for (const name of ['batch', 'web']) await ok(stack, 'POST', '/api/v1/teams', { org: 'Acme', name });
    // batch: its one GPU is guaranteed (protected); web: no guarantee, so what it holds is borrowed.
    await ok(stack, 'PUT', '/api/v1/quotas', {
      scope: 'team:Acme/batch',
      guarantee: { gpus: 1 },
      limit: { gpus: 1, cores: 16 },
    });
    await ok(stack, 'PUT', '/api/v1/quotas', { scope: 'team:Acme/web', limit: { gpus: 2 } });
    for (const [model, owner, inFlight] of [
      ['batch-job', 'team:Acme/batch', 3],
      ['web-chat', 'team:Acme/web', 5],
    ] as const) {
      await ok(stack, 'PUT', `/api/v1/models/${model}`, {
        owner,
        min_replicas: 0,
        max_replicas: 8,
        profiles: [gpuProfile('h100', 1, { default_concurrency: 1 })],
      });
      await ok(stack, 'POST', `/api/v1/models/${model}/load`, { in_flight: inFlight });
    }
    await settledAt(stack, 'batch-job', 1);
    await settledAt(stack, 'web-chat', 2);
    await decisionSaying(stack, 'batch-job', /a limit of team Acme \/ batch stops h100/);
    await decisionSaying(stack, 'web-chat', /a limit of team Acme \/ web stops h100/);
  });
  after(() => stack.stop());

  /** GET /api/v1/quotas and /metrics read while nothing moves (the quotas read the same before and after). */
  const steadyReading = () =>
    eventually('a steady reading of /api/v1/quotas and /metrics', async () => {
      const before = await ok<QuotaRow[]>(stack, 'GET', '/api/v1/quotas');
      const answer = await fetch(`${stack.url}/metrics`, {
        headers: { authorization: `Bearer ${stack.metricsToken}` },
      });
      assert.equal(answer.status, 200);
      assert.match(answer.headers.get('content-type') ?? '', /^text\/plain/);
      const samples = parseMetrics(await answer.text());
      const afterwards = await ok<QuotaRow[]>(stack, 'GET', '/api/v1/quotas');
      return JSON.stringify(before) === JSON.stringify(afterwards) ? { quotas: before, samples } : undefined;
    });

  it('/metrics has the figures GET /api/v1/quotas reports, per scope and resource', async () => {
    const { quotas, samples } = await steadyReading();
    assert.equal(quotas.length, 2);
    const batch = quotas.find((q) => q.name === 'Acme / batch')!;
    assert.deepEqual(batch.holds, { gpus: 1, cores: 4, memory_gib: 32 });
    assert.deepEqual(quotas.find((q) => q.name === 'Acme / web')!.borrowed, {
      gpus: 2,
      cores: 8,
      memory_gib: 64,
    });

    for (const quota of quotas) {
      const value = (name: string, resource: string) =>
        find(samples, name, { scope: quota.scope, name: quota.name, resource }).map((s) => s.value);
      for (const resource of DIMENSIONS) {
        const where = `${quota.name} ${resource}`;
        assert.deepEqual(value('llmgw_quota_holds', resource), [quota.holds[resource]], `holds of ${where}`);
        assert.deepEqual(
          value('llmgw_quota_borrowed', resource),
          [quota.borrowed[resource]],
          `borrowed of ${where}`,
        );
        for (const bound of ['guarantee', 'limit'] as const) {
          const set = quota[bound]?.[resource];
          assert.deepEqual(
            value(`llmgw_quota_${bound}`, resource),
            set === undefined ? [] : [set],
            `${bound} of ${where}`,
          );
        }
      }
    }
  });

  it('names the models the limits block, pending for "limit"', async () => {
    const { quotas, samples } = await steadyReading();
    for (const [model, scopeName] of [
      ['batch-job', 'Acme / batch'],
      ['web-chat', 'Acme / web'],
    ]) {
      const scope = quotas.find((q) => q.name === scopeName)!.scope;
      assert.deepEqual(
        find(samples, 'llmgw_model_blocked_by_limit', { model }).map((s) => [s.labels, s.value]),
        [[{ model, scope, name: scopeName, resource: 'gpus' }, 1]],
      );
      assert.deepEqual(
        find(samples, 'llmgw_model_pending', { model }).map((s) => [s.labels.reason, s.value]),
        [['limit', 1]],
      );
    }
    const batchJob = (name: string, labels: Record<string, string> = {}) =>
      find(samples, name, { model: 'batch-job', ...labels }).map((s) => s.value);
    assert.deepEqual(batchJob('llmgw_model_replicas', { profile: 'h100', state: 'ready' }), [1]);
    assert.deepEqual(batchJob('llmgw_model_in_flight'), [3]);
    assert.deepEqual(batchJob('llmgw_model_capacity_at_slo'), [1]);
  });

  it("counts the reconcilers' decisions and times their passes", async () => {
    const { samples } = await steadyReading();
    const total = (name: string, labels: Record<string, string> = {}) =>
      find(samples, name, labels).reduce((sum, s) => sum + s.value, 0);
    assert.ok(total('llmgw_reconcile_decisions_total', { model: 'batch-job', action: 'place' }) >= 1);
    assert.ok(total('llmgw_reconcile_decisions_total', { model: 'web-chat', action: 'none' }) >= 1);
    assert.ok(total('llmgw_reconcile_pass_seconds_count') > 0);
    assert.deepEqual(
      find(samples, 'llmgw_cluster_capacity', { resource: 'gpus' }).map((s) => s.value),
      [4],
    );
  });

  it('a lone worker serves its own metrics on LLMGW_METRICS_PORT, without the state gauges', async () => {
    const answer = await fetch(`http://${stack.config.host}:${workerPort}/metrics`);
    assert.equal(answer.status, 200);
    const samples = parseMetrics(await answer.text());
    assert.ok(find(samples, 'llmgw_reconcile_decisions_total', { model: 'batch-job' }).length > 0);
    assert.deepEqual(find(samples, 'llmgw_quota_holds', {}), []);
  });
});
