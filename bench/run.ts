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
try {
  await import(pathToFileURL(join(here, name, 'main.ts')).href);
} catch (error) {
  // A bench's options are read as it loads (node:util parseArgs): a bad one is the user's, in a sentence.
  const { code, message } = error as { code?: string; message?: string };
  if (!code?.startsWith('ERR_PARSE_ARGS_')) throw error;
  console.error(`npm run bench -- ${name}: ${message?.split('\n')[0]}`);
  process.exit(2);
}
