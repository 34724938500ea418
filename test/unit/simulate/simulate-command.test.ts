import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it, mock } from 'node:test';
import { DEFAULT_SCENARIOS, runSimulate } from '../../../src/cli/simulate.ts';
import { loadTraces } from '../../../src/simulate/experiment.ts';
import { readScenario } from '../../../src/simulate/scenario.ts';

/** A scenario of one model on 2 GPUs, and its trace: 40 requests over 40 s, then 40 at once at 100 s. */
function tinyScenario(...moreLines: string[]): { dir: string; scenario: string } {
  const dir = mkdtempSync(join(tmpdir(), 'llmgw-simulate-'));
  mkdirSync(join(dir, 'data'));
  const at = (s: number) =>
    new Date(Date.UTC(2023, 10, 16, 18, 0, s)).toISOString().replace('T', ' ').replace('Z', '0000');
  const lines = [
    ...Array.from({ length: 40 }, (_, i) => `${at(i)},400,20`),
    ...Array.from({ length: 40 }, () => `${at(100)},400,20`),
  ];
  writeFileSync(
    join(dir, 'data', 'chat.csv'),
    `TIMESTAMP,ContextTokens,GeneratedTokens\n${lines.join('\n')}\n`,
  );
  writeFileSync(
    join(dir, 'cluster.yaml'),
    'nodes:\n  - { name: gpu, gpu_model: H100, capacity: { gpus: 2 } }\n',
  );
  writeFileSync(
    join(dir, 'models.yaml'),
    'name: chat\nmin_replicas: 1\nmax_replicas: 2\nprofiles:\n  - { name: h100, resources: { gpus: 1 }, gpu_model: H100 }\n',
  );
  writeFileSync(
    join(dir, 'tiny.yaml'),
    [
      'cluster: cluster.yaml',
      'models: models.yaml',
      'measurements:',
      '  - { model: chat, profile: h100, max_concurrency_at_slo: 8, throughput_tok_per_sec: 200, prefill_tok_per_sec: 4000 }',
      'traces: { chat: chat.csv }',
      ...moreLines,
    ].join('\n'),
  );
  return { dir, scenario: join(dir, 'tiny.yaml') };
}

describe('llmgw simulate', () => {
  it('prints the table, the goal and ends with one RESULT line; writes the charts', async () => {
    const { dir, scenario } = tinyScenario();
    const log = mock.method(console, 'log', () => {});
    const progress = mock.method(process.stderr, 'write', () => true);
    try {
      await runSimulate([
        '--scenario',
        scenario,
        '--data',
        join(dir, 'data'),
        '--charts',
        join(dir, 'charts'),
        '--skip-placement',
      ]);
    } finally {
      log.mock.restore();
      progress.mock.restore();
    }
    const lines = log.mock.calls.map((call) => String(call.arguments[0]));
    assert.ok(lines.some((line) => /^policy +model +covered/.test(line.split('\n')[0])));
    assert.ok(lines.some((line) => line.startsWith('chat: llmgw covers the load')));
    const result = lines.at(-1)!;
    assert.match(result, /^RESULT simulate wall_s=[\d.]+ tiny\.llmgw\.chat\.covered=[\d.]+ /);
    for (const policy of ['llmgw', 'ray-serve', 'ray-serve-c', 'hpa-keda', 'llm-d-wva', 'static-peak']) {
      assert.match(
        result,
        new RegExp(` tiny\\.${policy}\\.chat\\.gpu_h=[\\d.]+ .*tiny\\.${policy}\\.chat\\.taken_away=0\\b`),
      );
    }
    assert.match(readFileSync(join(dir, 'charts', 'tiny-chat-load.svg'), 'utf8'), /^<svg /);
    assert.match(readFileSync(join(dir, 'charts', 'tiny-cost-coverage.svg'), 'utf8'), /GPU-hours/);
  });

  it('refuses a missing trace in one sentence naming where it looked', async () => {
    const { scenario } = tinyScenario();
    await assert.rejects(
      runSimulate(['--scenario', scenario, '--data', '/nowhere', '--skip-placement']),
      /^Error: trace \/nowhere\/chat.csv is missing: point --data \(or LLMGW_SIM_DATA\) at the folder that holds chat.csv$/,
    );
  });

  it('leaves out the requests of a model idle at first, and still starts the run with its trace', () => {
    const { dir, scenario } = tinyScenario('idle_first_s: { chat: 50 }');
    const load = loadTraces(readScenario(scenario), join(dir, 'data'));
    const start = Date.UTC(2023, 10, 16, 18, 0, 0);
    assert.equal(load.from, start);
    assert.equal(load.until, start + 100_000 + 60_000);
    assert.deepEqual(
      [...new Set(load.requests.get('chat')!.map((r) => r.at - start))],
      [100_000],
      'only the 40 requests at 100 s are left',
    );
  });

  it('refuses an idle_first_s that names no model', () => {
    const { scenario } = tinyScenario('idle_first_s: { code: 50 }');
    assert.throws(() => readScenario(scenario), /idle_first_s names no model "code"$/);
  });

  it('reads the scenarios it runs by default', () => {
    const [azure, contention] = DEFAULT_SCENARIOS.map(readScenario);
    assert.deepEqual(
      azure.models.map((m) => [m.name, m.owner]),
      [
        ['chat', 'team:chat'],
        ['code', 'team:code'],
      ],
    );
    assert.equal(azure.nodes.length, 4);
    assert.equal(azure.startDelayMs, 60_000);
    assert.deepEqual(
      contention.quotas.map((q) => [q.scope, q.guarantee?.gpus]),
      [
        ['team:chat', 10],
        ['team:code', 2],
      ],
    );
    assert.deepEqual([...contention.idleFirstMs], [['chat', 720_000]]);
  });

  it('runs the Azure hour with other start delays and capacities per replica too', () => {
    const variants = DEFAULT_SCENARIOS.slice(2).map(readScenario);
    assert.deepEqual(
      variants.map((s) => [s.name, s.startDelayMs / 1000, s.measurements[0].max_concurrency_at_slo]),
      [
        ['azure-fast-start', 15, 8],
        ['azure-slow-start', 180, 8],
        ['azure-long-start', 300, 8],
        ['azure-small-replicas', 60, 4],
        ['azure-large-replicas', 90, 16],
      ],
    );
  });
});
