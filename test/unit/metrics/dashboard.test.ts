// Every metric the Grafana dashboard and the alert rules query must be one llmgw registers: a renamed
// metric would otherwise leave an empty panel or an alert that can never fire. And docs/metrics.md
// describes every metric and alert.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Histogram } from 'prom-client';
import { parse } from 'yaml';
import { DEFAULT_POLICY_SETTINGS } from '../../../src/domain/snapshot.ts';
import { createGatewayMetrics } from '../../../src/gateway/metrics.ts';
import { apiMetrics } from '../../../src/metrics/api-metrics.ts';
import { createMetrics } from '../../../src/metrics/registry.ts';
import type { Sql } from '../../../src/store/db.ts';

const root = join(import.meta.dirname, '../../..');

/** The metrics of the API's and the gateway's GET /metrics, listed without a store (a scrape would read one). */
const registered = () => {
  const unused = (() => assert.fail('no store is read to list names')) as unknown as Sql;
  const uncounted = () => assert.fail('no count is read to list names');
  return [
    ...apiMetrics(
      { sql: unused, policy: DEFAULT_POLICY_SETTINGS },
      createMetrics(),
    ).registry.getMetricsAsArray(),
    ...createGatewayMetrics({
      inFlight: uncounted,
      held: uncounted,
      oldestHeldSeconds: uncounted,
      replicas: uncounted,
    }).registry.getMetricsAsArray(),
  ];
};

/** The names /metrics can serve; histograms also as their _bucket, _sum and _count series. */
function servedNames(): Set<string> {
  return new Set(
    registered().flatMap((metric) =>
      metric instanceof Histogram
        ? ['_bucket', '_sum', '_count'].map((suffix) => metric.name + suffix)
        : [metric.name],
    ),
  );
}

const metricNames = (expr: string) => [...expr.matchAll(/\bllmgw_[a-z0-9_]+/g)].map((m) => m[0]);

interface Panel {
  title?: string;
  targets?: { expr?: string }[];
  panels?: Panel[];
}
interface Dashboard {
  panels: Panel[];
  templating: { list: { name: string; query?: string | { query?: string } }[] };
}

const alertRules = () =>
  (
    parse(readFileSync(join(root, 'deploy/prometheus/alerts.yml'), 'utf8')) as {
      groups: { rules: { alert: string; expr: string }[] }[];
    }
  ).groups.flatMap((group) => group.rules);

const dashboard = JSON.parse(readFileSync(join(root, 'deploy/grafana/llmgw.json'), 'utf8')) as Dashboard;
const dashboardQueries = (): [string, string][] => {
  const panels = (list: Panel[]): Panel[] => list.flatMap((p) => [p, ...panels(p.panels ?? [])]);
  const targets = panels(dashboard.panels).flatMap((p) =>
    (p.targets ?? []).map((t): [string, string] => [`panel "${p.title}"`, t.expr ?? '']),
  );
  const variables = dashboard.templating.list.map((v): [string, string] => [
    `variable $${v.name}`,
    typeof v.query === 'string' ? v.query : (v.query?.query ?? ''),
  ]);
  return [...targets, ...variables];
};

describe('metric names in the dashboard and the alerts', () => {
  const served = servedNames();

  it('the registry lists the metrics of docs/metrics.md without a running stack', () => {
    for (const name of [
      'llmgw_quota_limit',
      'llmgw_reconcile_pass_seconds_bucket',
      'llmgw_cluster_capacity',
    ]) {
      assert.ok(served.has(name), name);
    }
  });

  it('deploy/grafana/llmgw.json queries only metrics llmgw serves', () => {
    const queries = dashboardQueries();
    assert.ok(
      queries.filter(([, expr]) => metricNames(expr).length > 0).length >= 10,
      'too few queries found',
    );
    const unknown = queries.flatMap(([where, expr]) =>
      metricNames(expr)
        .filter((name) => !served.has(name))
        .map((name) => `${where}: ${name}`),
    );
    assert.deepEqual(unknown, []);
  });

  it("the dashboard's queries use only variables it defines", () => {
    const defined = new Set(dashboard.templating.list.map((v) => v.name));
    const undefinedVariables = dashboardQueries().flatMap(([where, expr]) =>
      [...expr.matchAll(/\$(\w+)/g)]
        .map((m) => m[1])
        .filter((name) => !name.startsWith('__') && !defined.has(name))
        .map((name) => `${where}: $${name}`),
    );
    assert.deepEqual(undefinedVariables, []);
  });

  it('deploy/prometheus/alerts.yml queries only metrics llmgw serves', () => {
    const all = alertRules();
    assert.ok(all.length >= 5, 'too few alert rules found');
    const unknown = all.flatMap((rule) =>
      metricNames(rule.expr)
        .filter((name) => !served.has(name))
        .map((name) => `${rule.alert}: ${name}`),
    );
    assert.deepEqual(unknown, []);
  });
});

describe('docs/metrics.md', () => {
  const docs = readFileSync(join(root, 'docs/metrics.md'), 'utf8');
  const undocumented = (names: Iterable<string>) =>
    [...names].filter((name) => !docs.includes(`\`${name}\``));

  it('describes every metric', () => {
    assert.deepEqual(undocumented(registered().map((metric) => metric.name)), []);
  });

  it('describes every alert', () => {
    assert.deepEqual(undocumented(new Set(alertRules().map((rule) => rule.alert))), []);
  });
});
