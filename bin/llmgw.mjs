#!/usr/bin/env node
// The `llmgw` command: runs the TypeScript sources through tsx's loader.
import { register } from 'tsx/esm/api';

// The loader runs in a thread with a copy of the environment taken now, and starts an esbuild process
// with that copy: llmgw's own variables (its secrets among them) are kept out of both.
const ours = Object.entries(process.env).filter(([name]) => /^(LLMGW_|TEMPORAL_|DATABASE_URL$)/.test(name));
for (const [name] of ours) delete process.env[name];
register();
Object.assign(process.env, Object.fromEntries(ours));
await import('../src/cli/main.ts');
