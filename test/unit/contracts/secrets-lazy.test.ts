// zxcvbn's dictionaries (11.5 MB of heap, 170 ms to load) are loaded only when a secret's strength is
// first asked for: every process that hashes a key imports contracts/secrets.ts, each gateway worker too.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const SECRETS = join(import.meta.dirname, '..', '..', '..', 'src', 'contracts', 'secrets.ts');

/** In a process of its own (a fresh module cache): the zxcvbn modules loaded after importing, then after asking. */
const PROBE = `
import { createRequire } from 'node:module';
const require = createRequire(import.meta.url);
const loaded = () => Object.keys(require.cache).filter((file) => file.includes('@zxcvbn-ts')).length;
const secrets = await import(${JSON.stringify(SECRETS)});
const afterImport = loaded();
secrets.hashSecret('llmgw_x');
const afterHash = loaded();
const guesses = secrets.guessesLog10('Password1234567890Password123456');
console.log(JSON.stringify({ afterImport, afterHash, afterAsking: loaded(), guesses }));
`;

describe('zxcvbn, loaded when first asked', () => {
  it('is not loaded by importing the secrets module nor by hashing, and is once a strength is asked for', () => {
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', PROBE], {
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, run.stderr);
    const seen = JSON.parse(run.stdout);
    assert.equal(seen.afterImport, 0);
    assert.equal(seen.afterHash, 0);
    assert.ok(
      seen.afterAsking >= 3,
      `zxcvbn's core and both dictionaries loaded (${seen.afterAsking} files)`,
    );
    assert.ok(seen.guesses < 25, `a patterned secret still estimates below 10^25 (${seen.guesses})`);
  });
});
