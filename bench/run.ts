// `npm run bench -- NAME [args]` runs bench/NAME/main.ts, which prints a table and ends with one
// line `RESULT NAME key=value ...`.
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const name = process.argv[2];
const available = readdirSync(here, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(here, entry.name, 'main.ts')))
  .map((entry) => entry.name);

if (!name || !available.includes(name)) {
  console.error(`usage: npm run bench -- NAME; NAME is one of: ${available.join(', ') || '(none yet)'}`);
  process.exit(2);
}
process.argv.splice(2, 1);
await import(pathToFileURL(join(here, name, 'main.ts')).href);
