#!/usr/bin/env node
// The `llmgw` command: runs the TypeScript sources through tsx's loader.
import { createRequire } from 'node:module';
import { simEngineBundle } from './sim-engine-bundle.mjs';

// The loader runs in a thread with a copy of the environment taken now, and starts an esbuild process
// with that copy (so does the sim engine's bundling): llmgw's own variables (its secrets among them)
// are kept out of both.
const ours = Object.entries(process.env).filter(([name]) => /^(LLMGW_|TEMPORAL_|DATABASE_URL$)/.test(name));
for (const [name] of ours) delete process.env[name];
if (process.argv[2] === 'sim-engine') {
  // An agent starts one simulated engine per replica, many at once: each loads its own modules alone
  // (src/cli/sim-engine.ts and src/cluster/sim/engine*.ts, never the CLI's whole graph: Temporal's
  // worker, Postgres, the API), bundled into plain JavaScript (sim-engine-bundle.mjs), or else compiled
  // by tsx's require hook in this thread rather than by its ESM loader in a thread of its own. On 2
  // cores, 20 at once took 18 s through the whole CLI (bench/agent-start). So those modules do without
  // import.meta and top-level await, which a module required this way cannot have.
  const require = createRequire(import.meta.url);
  const bundle = simEngineBundle();
  if (!bundle) require('tsx/cjs/api').register();
  const { runSimEngine } = require(bundle ?? '../src/cli/sim-engine.ts');
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
