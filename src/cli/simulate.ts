import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { costCoverageSpec, loadCapacitySpec, toSvg } from '../simulate/charts.ts';
import { loadTraces, runPolicies } from '../simulate/experiment.ts';
import { figuresTable, goalLines, resultLine } from '../simulate/report.ts';
import { readScenario } from '../simulate/scenario.ts';

const REPO_ROOT = join(import.meta.dirname, '..', '..');
export const DEFAULT_SCENARIO = join(REPO_ROOT, 'bench', 'simulate', 'scenarios', 'azure.yaml');

export const SIMULATE_USAGE = `usage: llmgw simulate [--scenario FILE] [--data DIR] [--charts DIR]

Replays a scenario's traces through llmgw's policy and its peers on a simulated clock, and prints
their figures. --scenario: a scenario YAML (default bench/simulate/scenarios/azure.yaml); --data:
the folder of the traces (default LLMGW_SIM_DATA, else ../shared/data beside the repository);
--charts: write SVG charts there.`;

/** `llmgw simulate` (and `npm run bench -- simulate`): prints the table, the goal and a RESULT line. */
export async function runSimulate(args: string[], resultName = 'simulate'): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      scenario: { type: 'string', default: DEFAULT_SCENARIO },
      data: { type: 'string' },
      charts: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.info(SIMULATE_USAGE);
    return;
  }
  const started = performance.now();
  const scenario = readScenario(values.scenario);
  const load = loadTraces(scenario, values.data);
  const { runs, figures } = runPolicies(scenario, load, (policy, done, of) =>
    process.stderr.write(`${scenario.name}: ${policy} ${Math.round((100 * done) / of)}% of the clock\n`),
  );
  const wall = (performance.now() - started) / 1000;
  console.log(`\n${scenario.name}: ${Math.round((load.until - load.from) / 60_000)} minutes simulated`);
  console.log(figuresTable(figures));
  console.log('');
  for (const line of goalLines(figures)) console.log(line);
  if (values.charts) {
    mkdirSync(values.charts, { recursive: true });
    for (const model of scenario.models) {
      const file = join(values.charts, `${scenario.name}-${model.name}-load.svg`);
      writeFileSync(file, await toSvg(loadCapacitySpec(runs, model.name)));
      console.log(`wrote ${file}`);
    }
    const file = join(values.charts, `${scenario.name}-cost-coverage.svg`);
    writeFileSync(file, await toSvg(costCoverageSpec(figures)));
    console.log(`wrote ${file}`);
  }
  console.log(resultLine(resultName, figures, { scenario: scenario.name, wall_s: wall.toFixed(1) }));
}
