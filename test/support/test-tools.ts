import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';

const SCRIPT = join(import.meta.dirname, '..', '..', 'scripts', 'test-tools.sh');

/** The tools some tests run besides node (scripts/test-tools.sh installs them), and the tests that run them. */
export const TEST_TOOLS = {
  st: { variable: 'LLMGW_TEST_ST', neededBy: ['test/integration/fuzz-schemathesis.test.ts'] },
  promtool: { variable: 'LLMGW_TEST_PROMTOOL', neededBy: ['test/unit/metrics/alerts.test.ts'] },
  compose: { variable: 'LLMGW_TEST_COMPOSE', neededBy: ['test/unit/deploy/compose.test.ts'] },
  testserver: {
    variable: 'LLMGW_TEST_TEMPORAL_TEST_SERVER',
    neededBy: ['test/unit/workflows/reconcile-model.test.ts'],
  },
  guidellm: {
    variable: 'LLMGW_TEST_GUIDELLM',
    neededBy: [
      'test/integration/bench-guidellm.test.ts',
      'test/integration/agent/supervisor.test.ts',
      'test/e2e/llama-cpp.test.ts',
    ],
  },
  chromium: { variable: 'LLMGW_TEST_CHROMIUM', neededBy: ['test/e2e/console.test.ts'] },
  llamaserver: { variable: 'LLMGW_TEST_LLAMA_SERVER', neededBy: ['test/e2e/llama-cpp.test.ts'] },
  tinygguf: { variable: 'LLMGW_TEST_TINY_GGUF', neededBy: ['test/e2e/llama-cpp.test.ts'] },
} as const;

export type TestTool = keyof typeof TEST_TOOLS;

/**
 * Finds or installs `tools` with scripts/test-tools.sh, whose progress goes to stderr as it comes.
 * Returns each tool's variable: its path, or '' when it cannot be had (the script said why).
 */
export async function installTestTools(tools: TestTool[]): Promise<Record<string, string>> {
  if (tools.length === 0) return {};
  const script = spawn('bash', [SCRIPT, ...tools], { stdio: ['ignore', 'pipe', 'inherit'] });
  const found: Record<string, string> = {};
  createInterface({ input: script.stdout }).on('line', (line) => {
    const name = line.slice(0, line.indexOf('='));
    if (name in TEST_TOOLS) found[TEST_TOOLS[name as TestTool].variable] = line.slice(name.length + 1);
  });
  await new Promise((resolve, reject) => {
    script.once('error', reject);
    script.once('close', resolve);
  });
  return found;
}

const looked = new Map<TestTool, Promise<string>>();

/**
 * The path of `tool` for a test: the one `npm test` found, else (a test file run alone) found or
 * installed now. Fails with a sentence when the tool cannot be had: its test must not pass without it.
 */
export function testTool(tool: TestTool): Promise<string> {
  const path = looked.get(tool) ?? lookUp(tool);
  looked.set(tool, path);
  return path;
}

async function lookUp(tool: TestTool): Promise<string> {
  const { variable } = TEST_TOOLS[tool];
  const path = process.env[variable] ?? (await installTestTools([tool]))[variable];
  if (!path) {
    throw new Error(
      `${tool} could not be installed; the "test-tools:" lines of this run say why (scripts/test-tools.sh)`,
    );
  }
  return path;
}
