// The lease's holder scrapes each running engine's /metrics at its pod IP. kwok's pod IPs reach nothing,
// so the pod IP is mapped to a real sim engine on loopback (the `address` the worker leaves at podIP:8000).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { engineCommand } from '../../../../src/agent/engine-command.ts';
import { type EngineLoad, scrapeLoad } from '../../../../src/agent/engine-metrics.ts';
import { podFor } from '../../../../src/cluster/kubernetes/pod.ts';
import { podEngines, scrapePodEngines } from '../../../../src/cluster/kubernetes/pod-metrics.ts';
import { SIM_DEFAULTS, type SimEngine, startSimEngine } from '../../../../src/cluster/sim/engine.ts';
import type { EngineSpec } from '../../../../src/contracts/schemas/engine.ts';

const options = {
  namespace: 'llmgw',
  images: { vllm: 'vllm', sim: 'sim', command: 'busybox' },
  drainGraceS: 30,
  engineCommand,
};

/** The pod podFor makes for `engine`, as the API server has it once kwok ran it at `ip`. */
function runningPod(id: string, engine: EngineSpec, ip: string, phase = 'Running'): V1Pod {
  const replica = { id, model: 'm', node: 'n', resources: {} };
  const made = podFor(
    replica,
    { replica: id, model: 'm', profile: { name: 'p', resources: {}, engine } },
    null,
    options,
  );
  assert.ok(made.ok, made.ok ? '' : made.why);
  return { ...made.pod, status: { phase, podIP: ip } };
}

describe("engines' metrics at their pod IPs", () => {
  let engine: SimEngine;
  before(async () => {
    engine = await startSimEngine({ ...SIM_DEFAULTS, jitter: 0, seed: 1 });
  });
  after(() => engine.stop());

  it('scrapes the engines whose kind exports load gauges, at podIP:8000 by default', () => {
    const pods = [
      runningPod('sim-1', { kind: 'sim' }, '10.0.0.1'),
      runningPod('vllm-1', { kind: 'vllm', model: 'meta/llama' }, '10.0.0.2'),
      runningPod('quiet-1', { kind: 'sim', metrics: false }, '10.0.0.3'),
      runningPod('pending-1', { kind: 'sim' }, '10.0.0.5', 'Pending'),
    ];
    assert.deepEqual(
      podEngines(pods).map(({ replica, url, gauges }) => [replica, url, gauges.running]),
      [
        ['sim-1', 'http://10.0.0.1:8000', 'vllm:num_requests_running'],
        ['vllm-1', 'http://10.0.0.2:8000', 'vllm:num_requests_running'],
      ],
    );
  });

  it("reports the load a running engine's /metrics says, and skips one that does not answer", async () => {
    const host = new URL(engine.url).host;
    const pods = [
      runningPod('sim-1', { kind: 'sim' }, '10.0.0.1'),
      runningPod('gone-1', { kind: 'sim' }, '10.0.0.9'),
    ];
    // 10.0.0.9 maps to a loopback port nothing listens on: the scrape fails, and the other still reports.
    const address = (ip: string) => (ip === '10.0.0.1' ? host : '127.0.0.1:1');
    const reports: [string, EngineLoad][] = [];
    const warnings: string[] = [];
    await scrapePodEngines(
      podEngines(pods, address),
      scrapeLoad,
      async (replica, load) => {
        reports.push([replica, load]);
      },
      { warn: (line: string) => warnings.push(line) },
    );
    assert.deepEqual(reports, [['sim-1', { running: 0, waiting: 0 }]]);
    assert.equal(warnings.length, 1);
    assert.match(warnings[0], /replica gone-1/);
  });

  it('says a failing scrape once, until it works again', async () => {
    const engines = podEngines([runningPod('gone-1', { kind: 'sim' }, '10.0.0.9')], () => '127.0.0.1:1');
    const warnings: string[] = [];
    const log = { warn: (line: string) => warnings.push(line) };
    const failing = new Set<string>();
    const report = async () => {};
    await scrapePodEngines(engines, scrapeLoad, report, log, failing);
    await scrapePodEngines(engines, scrapeLoad, report, log, failing);
    assert.equal(warnings.length, 1);
    await scrapePodEngines([], scrapeLoad, report, log, failing);
    assert.equal(failing.size, 0, 'a replica whose pod is gone is forgotten');
  });
});
