// llmgw's policy against its peers on the Azure LLM trace (and the contention scenario), on a
// simulated clock; writes the charts to docs/simulation/. Reproduce: npm run bench -- simulate
// [--scenario FILE] [--data DIR] [--charts DIR]
import { join } from 'node:path';
import { runSimulate } from '../../src/cli/simulate.ts';

const charts = join(import.meta.dirname, '..', '..', 'docs', 'simulation');
const args = process.argv.slice(2);
await runSimulate(args.includes('--charts') ? args : [...args, '--charts', charts]);
