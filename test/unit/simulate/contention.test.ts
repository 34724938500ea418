import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_SCENARIOS } from '../../../src/cli/simulate.ts';
import { loadTraces, runPolicies } from '../../../src/simulate/experiment.ts';
import { figuresOf } from '../../../src/simulate/figures.ts';
import type { RunResult } from '../../../src/simulate/run.ts';
import { readScenario } from '../../../src/simulate/scenario.ts';
import { FROM, gpuModel, held, loadOf, scene } from './scene.ts';

describe('contention: a guaranteed team whose load rises while another borrows the room', () => {
  // 4 GPUs. chat (team chat, guaranteed 3 GPUs) serves 4 in flight on 1 replica; code (no guarantee)
  // holds the other 3 for its 20 in flight. At 200 s chat's load rises to 20: it needs 3 replicas.
  const scenario = scene(
    [gpuModel('chat', { owner: 'team:chat' }), gpuModel('code', { owner: 'team:code' })],
    {
      nodes: [{ name: 'gpu-1', capacity: { gpus: 4 }, gpu_model: 'H100', labels: {}, state: 'ready' }],
      scopes: [
        { key: 'org:acme', kind: 'org', id: 'acme', name: 'Acme', parent: null },
        { key: 'team:chat', kind: 'team', id: 'chat', name: 'chat', parent: 'org:acme' },
        { key: 'team:code', kind: 'team', id: 'code', name: 'code', parent: 'org:acme' },
      ],
      quotas: [{ scope: 'team:chat', guarantee: { gpus: 3 } }],
    },
  );
  const rise = FROM + 200_000;
  const load = loadOf(
    {
      chat: [...held(4, FROM - 1000, 3_600_000), ...held(16, rise, 3_600_000)],
      code: held(20, FROM - 1000, 3_600_000),
    },
    900_000,
  );
  const { runs } = runPolicies(scenario, load);
  const run = (policy: string) => runs.find((r) => r.policy === policy)!;
  /** Ticks from `at` on at which chat's ready slots fall short of its load. */
  const shortTicks = (r: RunResult, at: number) => {
    const { load, capacity } = r.series.get('chat')!;
    let short = 0;
    for (let i = (at - r.from) / r.tickMs; i < load.length; i++) if (capacity[i] < load[i]) short++;
    return short;
  };

  it('llmgw reclaims the borrowed replicas: chat is covered once they drained and its own started', () => {
    // Drain grace 30 s, then start delay 60 s: covered from 200 + 1 + 30 + 60 s at the latest.
    assert.equal(shortTicks(run('llmgw'), FROM + 291_000), 0);
    assert.equal(
      run('llmgw')
        .cluster.of('chat')
        .filter((r) => r.state === 'ready').length,
      3,
    );
    assert.equal(run('llmgw').cluster.of('code').length, 1);
  });

  it('the peers, without quotas, leave chat short for as long as code holds the room', () => {
    for (const policy of ['hpa-keda', 'ray-serve-c', 'llm-d-wva']) {
      assert.equal(shortTicks(run(policy), FROM + 291_000), 609, policy);
      assert.equal(run(policy).cluster.of('code').length, 3, policy);
    }
  });
});

describe("the bench's contention hour (the Azure trace, chat's users arriving at minute 12)", () => {
  const scenario = readScenario(DEFAULT_SCENARIOS[1]);
  const load = loadTraces(scenario);
  const { runs } = runPolicies(scenario, load);
  const arrival = load.from + scenario.idleFirstMs.get('chat')!;
  const run = (policy: string) => runs.find((r) => r.policy === policy)!;
  /** Seconds from `at` on at which requests of chat wait for a slot. */
  const waitingTicks = (r: RunResult, at: number) =>
    r.series
      .get('chat')!
      .waiting.slice((at - r.from) / r.tickMs)
      .filter((waiting) => waiting > 0).length;
  const takenAway = (r: RunResult, model: string) => figuresOf(r).find((f) => f.model === model)!.takenAway;

  it("llmgw reclaims code's borrowed replicas for chat, and nothing of chat's waits 5 minutes after it arrived", () => {
    const reclaims = run('llmgw').cluster.drains.filter((d) => d.model === 'code' && d.takenBy !== undefined);
    assert.ok(reclaims.length > 0, 'code lost replicas to chat');
    assert.deepEqual([...new Set(reclaims.map((d) => d.takenBy))], ['reclaim']);
    assert.ok(reclaims[0].at >= arrival, 'none before chat had load');
    assert.equal(waitingTicks(run('llmgw'), arrival + 300_000), 0);
  });

  it("the peers take nothing back, and leave chat's requests waiting for more than a minute after that", () => {
    for (const policy of ['ray-serve', 'ray-serve-c', 'hpa-keda', 'llm-d-wva']) {
      assert.equal(takenAway(run(policy), 'code'), 0, policy);
      assert.ok(waitingTicks(run(policy), arrival + 300_000) > 60, policy);
    }
  });
});
