// `npm test`: starts Postgres and the Temporal dev server once, on free ports, and finds or installs the
// tools the chosen tests run (scripts/test-tools.sh); runs node's test runner on every test file with
// their addresses and paths in the environment, then stops the services, whatever happened.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SERVICE_ENV, type Services, startServices } from './support/services.ts';
import { installTestTools, TEST_TOOLS, type TestTool } from './support/test-tools.ts';

const root = join(import.meta.dirname, '..');
const only = process.argv.slice(2);
const files = (function find(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? find(join(dir, entry.name))
      : entry.name.endsWith('.test.ts')
        ? [join(dir, entry.name)]
        : [],
  );
})(join(root, 'test'))
  .map((file) => relative(root, file))
  .filter((file) => only.length === 0 || only.some((part) => file.includes(part)))
  .sort();

const tools = (Object.keys(TEST_TOOLS) as TestTool[]).filter((tool) =>
  files.includes(TEST_TOOLS[tool].neededBy),
);
console.info(`starting Postgres and the Temporal dev server for ${files.length} test files ...`);
let services: Services;
let toolPaths: Record<string, string>;
try {
  [services, toolPaths] = await Promise.all([startServices(), installTestTools(tools)]);
} catch (error) {
  console.error(`npm test: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
let exitCode = 1;
const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-timeout=300000', ...files],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      [SERVICE_ENV.database]: services.databaseUrl,
      [SERVICE_ENV.temporal]: services.temporalAddress,
      ...toolPaths,
    },
  },
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
exitCode = await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
await services.stop();
process.exit(exitCode);
