// `npm test`: starts Postgres and the Temporal dev server once, on free ports, runs node's test runner on
// every test file with their addresses in the environment, then stops them, whatever happened.
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { SERVICE_ENV, startServices } from './support/services.ts';

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

console.info(`starting Postgres and the Temporal dev server for ${files.length} test files ...`);
const services = await startServices();
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
    },
  },
);
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => child.kill(signal));
exitCode = await new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
await services.stop();
process.exit(exitCode);
