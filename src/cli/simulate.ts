import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { costCoverageSpec, loadCapacitySpec, placementSpec, toSvg } from '../simulate/charts.ts';
import { loadTraces, runPolicies } from '../simulate/experiment.ts';
import type { PolicyFigures } from '../simulate/figures.ts';
import { firstWaitBounds } from '../simulate/first-wait-bound.ts';
import { placementPairs, placementTable, runPlacements } from '../simulate/placement-experiment.ts';
import {
  boundLines,
  boundPairs,
  figuresTable,
  goalLines,
  resultLine,
  resultPairs,
} from '../simulate/report.ts';
import type { RunResult } from '../simulate/run.ts';
import { readScenario } from '../simulate/scenario.ts';
import { uncoveredLine, uncoveredStretches } from '../simulate/uncovered.ts';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
const SCENARIOS = join(REPO_ROOT, 'bench', 'simulate', 'scenarios');
/**
 * The hour of the Azure trace on room for both models, then on too little room under two teams; then the
 * same hour with other start delays and other capacities per replica, so that no rule is judged on one
 * start delay and one replica size alone.
 */
export const DEFAULT_SCENARIOS = [
  'azure.yaml',
  'contention.yaml',
  'azure-fast-start.yaml',
  'azure-slow-start.yaml',
  'azure-long-start.yaml',
  'azure-small-replicas.yaml',
  'azure-large-replicas.yaml',
].map((file) => join(SCENARIOS, file));

const SIMULATE_USAGE = `usage: llmgw simulate [--scenario FILE ...] [--data DIR] [--charts DIR] [--skip-placement]

Replays each scenario's traces through llmgw's policy and its peers on a simulated clock, and prints
their figures. --scenario: a scenario YAML, may be repeated (default: azure.yaml, contention.yaml and
the azure-*.yaml variants of bench/simulate/scenarios); --data: the folder of the traces (default LLMGW_SIM_DATA, else
../shared/data beside the repository); --charts: write SVG charts there. Then the Alibaba GPU pods
are placed on its 1,213 nodes by llmgw's best fit, dot product and first fit (--skip-placement: not).`;

/** `llmgw simulate` (and `npm run bench -- simulate`): prints the table, the goal and a RESULT line. */
export async function runSimulate(args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      scenario: { type: 'string', multiple: true },
      data: { type: 'string' },
      charts: { type: 'string' },
      'skip-placement': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.info(SIMULATE_USAGE);
    return;
  }
  const started = performance.now();
  const results: Record<string, string> = {};
  for (const path of values.scenario ?? DEFAULT_SCENARIOS) {
    const scenario = readScenario(path);
    const load = loadTraces(scenario, values.data);
    const { runs, figures } = runPolicies(scenario, load, (policy, done, of) =>
      process.stderr.write(`${scenario.name}: ${policy} ${Math.round((100 * done) / of)}% of the clock\n`),
    );
    console.log(`\n${scenario.name}: ${Math.round((load.until - load.from) / 60_000)} minutes simulated`);
    console.log(figuresTable(figures));
    console.log('');
    const bounds = firstWaitBounds(scenario, load);
    for (const line of goalLines(figures)) console.log(line);
    for (const line of boundLines(bounds, figures, scenario.startDelayMs)) console.log(line);
    for (const line of llmgwMisses(runs)) console.log(line);
    if (values.charts) await writeCharts(values.charts, scenario.name, runs, figures);
    Object.assign(results, resultPairs(scenario.name, figures), boundPairs(scenario.name, bounds));
  }
  if (!values['skip-placement']) {
    const runs = runPlacements(values.data, (placer) => process.stderr.write(`placement: ${placer}\n`));
    console.log('\nplacement: the Alibaba openb pods in creation order on its 1,213 GPU nodes');
    console.log(placementTable(runs));
    if (values.charts) {
      const file = join(values.charts, 'placement-unallocated.svg');
      writeFileSync(file, await toSvg(placementSpec(runs)));
      console.log(`wrote ${file}`);
    }
    Object.assign(results, placementPairs(runs));
  }
  const wall = ((performance.now() - started) / 1000).toFixed(1);
  console.log(resultLine('simulate', { wall_s: wall, ...results }));
}

/** Where llmgw left each model's load uncovered: the seconds the "covered" figure leaves out. */
function llmgwMisses(runs: readonly RunResult[]): string[] {
  const run = runs.find((r) => r.policy === 'llmgw');
  if (!run) return [];
  return [...run.series].map(
    ([model, series]) => `llmgw, ${uncoveredLine(model, uncoveredStretches(series, run.tickMs))}`,
  );
}

async function writeCharts(dir: string, name: string, runs: RunResult[], figures: PolicyFigures[]) {
  mkdirSync(dir, { recursive: true });
  const models = [...new Set(figures.map((f) => f.model))];
  for (const model of models) {
    const file = join(dir, `${name}-${model}-load.svg`);
    writeFileSync(file, await toSvg(loadCapacitySpec(runs, model)));
    console.log(`wrote ${file}`);
  }
  const file = join(dir, `${name}-cost-coverage.svg`);
  writeFileSync(file, await toSvg(costCoverageSpec(figures)));
  console.log(`wrote ${file}`);
}
