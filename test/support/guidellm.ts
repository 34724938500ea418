import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { testTool } from './test-tools.ts';

export interface GuidellmRun {
  /** The OpenAI API's base, as clients take it: e.g. http://127.0.0.1:8000/v1. */
  target: string;
  model: string;
  /** Sent as `Authorization: Bearer <apiKey>` with every request, the first check included. */
  apiKey?: string;
  /** Where benchmarks.json and guidellm.log are written. */
  outputDir: string;
  /** Streams in flight at once (GuideLLM's `concurrent` profile). Default 2. */
  concurrency?: number;
  /** Requests in all. Default 12. */
  requests?: number;
  /** Prompt tokens per request, by the tokenizer test-tools.sh made. Default 32. */
  promptTokens?: number;
  /** Tokens asked of each answer. Default 16. */
  outputTokens?: number;
}

/** Longer than any short run takes, even on a busy machine; then the process is killed. */
const KILL_AFTER_MS = 180_000;

/**
 * Runs real GuideLLM (scripts/test-tools.sh installs it) against an OpenAI-compatible server: a
 * concurrent benchmark of chat completions on synthetic prompts, streamed. Returns the path of its
 * benchmarks.json; fails with the end of GuideLLM's output when it exits non-zero.
 */
export async function runGuidellm(run: GuidellmRun): Promise<string> {
  const guidellm = await testTool('guidellm');
  const requests = run.requests ?? 12;
  const report = join(run.outputDir, 'benchmarks.json');
  const argv = [
    'run',
    // JSON, not key=value lists: a key or URL with a comma in it stays whole.
    '--backend',
    JSON.stringify({
      kind: 'openai_http',
      target: run.target,
      model: run.model,
      ...(run.apiKey ? { api_key: run.apiKey } : {}),
      // GuideLLM first checks the server at /health; /v1/models is what every OpenAI server (the gateway
      // included) serves, and checks the key too.
      api_routes: { '/health': 'v1/models' },
    }),
    '--tokenizer',
    JSON.stringify({ kind: 'huggingface_auto', model: join(dirname(guidellm), 'tokenizer') }),
    '--profile',
    JSON.stringify({ kind: 'concurrent', streams: run.concurrency ?? 2 }),
    '--constraint',
    JSON.stringify({ kind: 'max_requests', count: requests }),
    '--data',
    JSON.stringify({
      kind: 'synthetic_text',
      prompt_tokens: run.promptTokens ?? 32,
      output_tokens: run.outputTokens ?? 16,
    }),
    // The prompts are made before the run starts, so that making them does not delay the requests.
    '--data-loader',
    JSON.stringify({ kind: 'pytorch', samples: requests }),
    '--output',
    JSON.stringify({ kind: 'json', path: report }),
    '--disable-console-interactive',
  ];
  const { code, output } = await runLogged(guidellm, argv, run.outputDir);
  if (code !== 0 || !existsSync(report)) {
    throw new Error(
      `guidellm exited ${code} without ${report}; the end of its output:\n${output.slice(-4000)}`,
    );
  }
  return report;
}

/** Runs `command` in `cwd`: its exit code, and all it printed (also kept in cwd/guidellm.log). */
function runLogged(
  command: string,
  argv: string[],
  cwd: string,
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { cwd, env: { ...process.env, NO_COLOR: '1', COLUMNS: '200' } });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    const killer = setTimeout(() => child.kill('SIGKILL'), KILL_AFTER_MS);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(killer);
      writeFileSync(join(cwd, 'guidellm.log'), output);
      resolve({ code, output });
    });
  });
}
