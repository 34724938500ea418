// A benchmark given a bad option says so in one sentence and exits 2, before it starts anything.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const runner = fileURLToPath(new URL('../../../bench/run.ts', import.meta.url));

/** `npm run bench -- ...args`: its exit code and what it wrote to stderr. */
async function bench(...args: string[]) {
  try {
    await promisify(execFile)(process.execPath, ['--import', 'tsx', runner, ...args], { timeout: 60_000 });
    return { code: 0, stderr: '' };
  } catch (error) {
    const { code, stderr } = error as { code: number; stderr: string };
    return { code, stderr };
  }
}

describe('a benchmark given a bad option', () => {
  const cases = [
    { name: 'an option no benchmark has', args: ['gateway', '--nope'], says: "Unknown option '--nope'" },
    { name: 'a value read as an option', args: ['gateway', '--peers', '--rounds', '-1'], says: 'ambiguous' },
    { name: 'no whole number of rounds', args: ['gateway', '--peers', '--rounds', '0'], says: '--rounds 0:' },
    {
      name: 'rounds not counted that are not whole',
      args: ['gateway', '--peers', '--warm-rounds', '1.5'],
      says: '--warm-rounds 1.5:',
    },
    {
      name: 'seconds that are not a number',
      args: ['gateway', '--peers', '--seconds', 'x'],
      says: '--seconds x:',
    },
    { name: 'no worker process', args: ['gateway', '--peers', '--workers', '0'], says: '--workers 0:' },
    {
      name: "the base's workers not a whole number",
      args: ['gateway', '--peers', '--base', '.', '--base-workers', '1.5'],
      says: '--base-workers 1.5:',
    },
  ];
  for (const { name, args, says } of cases) {
    it(`${name}: one sentence, exit 2`, async () => {
      const { code, stderr } = await bench(...args);
      assert.equal(code, 2);
      assert.ok(stderr.includes(says), stderr);
      assert.equal(stderr.trim().split('\n').length, 1, `one line, no stack: ${stderr}`);
    });
  }
});
