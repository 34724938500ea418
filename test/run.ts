// `npm test`: starts Postgres and the Temporal dev server once, on free ports (LLMGW_TEST_TEMPORAL=server:
// Temporal server on that Postgres instead), and finds or installs the
// tools the chosen tests run (scripts/test-tools.sh); runs node's test runner on every test file with
// their addresses and paths in the environment, then stops the services, whatever happened.
// Files under test/unit need neither service: a run of those alone (`npm run test:unit`) starts none,
// and runs the files of each folder beneath test/unit in one process (support/unit-groups.ts).
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { SERVICE_ENV, type Services, startServices, testTemporal } from './support/services.ts';
import { TEST_REPORTERS } from './support/test-reporters.ts';
import { selectTests } from './support/test-selection.ts';
import { installTestTools, TEST_TOOLS, type TestTool } from './support/test-tools.ts';
import { unitGroups } from './support/unit-groups.ts';

const root = join(import.meta.dirname, '..');
const files = selectTests(
  (function find(dir: string): string[] {
    return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
      entry.isDirectory()
        ? find(join(dir, entry.name))
        : entry.name.endsWith('.test.ts')
          ? [relative(root, join(dir, entry.name))]
          : [],
    );
  })(join(root, 'test')),
  process.argv.slice(2),
);

const tools = (Object.keys(TEST_TOOLS) as TestTool[]).filter((tool) =>
  TEST_TOOLS[tool].neededBy.some((file) => files.includes(file)),
);
const unitOnly = files.every((file) => file.startsWith('test/unit/'));
const TEMPORAL_NAMES = { dev: 'the Temporal dev server', server: 'Temporal server on Postgres' };
let services: Services | null;
let toolPaths: Record<string, string>;
try {
  console.info(
    unitOnly
      ? `running ${files.length} unit test files, without Postgres and Temporal ...`
      : `starting Postgres and ${TEMPORAL_NAMES[testTemporal()]} for ${files.length} test files ...`,
  );
  [services, toolPaths] = await Promise.all([unitOnly ? null : startServices(), installTestTools(tools)]);
} catch (error) {
  console.error(`npm test: ${error instanceof Error ? error.message : String(error)}`);
  process.exit(1);
}
// Unit test processes share nothing, and many wait (on processes they start, on timers): four at a
// time keep two cores busy. Files that share the services run one at a time.
const concurrency = unitOnly ? 4 : 1;
const entries = mkdtempSync(join(tmpdir(), 'llmgw-test-'));
const testFiles = unitOnly ? unitGroups(root, files, entries) : files;
let exitCode = 1;
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    '--test',
    `--test-concurrency=${concurrency}`,
    '--test-timeout=300000',
    ...TEST_REPORTERS,
    ...testFiles,
  ],
  {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      ...(services
        ? { [SERVICE_ENV.database]: services.databaseUrl, [SERVICE_ENV.temporal]: services.temporalAddress }
        : { [SERVICE_ENV.none]: '1' }),
      ...toolPaths,
    },
  },
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
exitCode = await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
await services?.stop();
rmSync(entries, { recursive: true, force: true });
process.exit(exitCode);
