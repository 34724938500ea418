#!/usr/bin/env node
// The `llmgw` command: runs the TypeScript sources through tsx's loader.
import { createRequire } from 'node:module';

// The loader runs in a thread with a copy of the environment taken now, and starts an esbuild process
// with that copy: llmgw's own variables (its secrets among them) are kept out of both.
const ours = Object.entries(process.env).filter(([name]) => /^(LLMGW_|TEMPORAL_|DATABASE_URL$)/.test(name));
for (const [name] of ours) delete process.env[name];
if (process.argv[2] === 'sim-engine') {
  // An agent starts one simulated engine per replica, many at once: each loads its own module alone
  // (src/cli/sim-engine.ts and src/cluster/sim/engine*.ts, never the CLI's whole graph: Temporal's
  // worker, Postgres, the API), compiled by tsx's require hook in this thread rather than by its ESM
  // loader in a thread of its own. On 2 cores: 0.12 s to its first /health 200 instead of 1.1 s, and
  // 1.1 s instead of 18 s for 20 at once (bench/agent-start). So those modules do without
  // import.meta and top-level await, which a module required this way cannot have.
  const require = createRequire(import.meta.url);
  require('tsx/cjs/api').register();
  const { runSimEngine } = require('../src/cli/sim-engine.ts');
  Object.assign(process.env, Object.fromEntries(ours));
  // As src/cli/main.ts says a command's failure.
  runSimEngine(process.argv.slice(3)).catch((error) => {
    console.error(`llmgw: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
} else {
  (await import('tsx/esm/api')).register();
  Object.assign(process.env, Object.fromEntries(ours));
  await import('../src/cli/main.ts');
}
