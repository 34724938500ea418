// src/policy/README.md's table names every policy file and the tests beside it: a file added without a
// row, a row left after its file went, or a test named that is not there fails here.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = join(import.meta.dirname, '..', '..', '..');
const POLICY = join(root, 'src', 'policy');
const TESTS = join(root, 'test', 'unit', 'policy');

/** The table's rows: file -> the tests its last column names, in order. */
function tableRows(): Map<string, string[]> {
  const rows = new Map<string, string[]>();
  for (const line of readFileSync(join(POLICY, 'README.md'), 'utf8').split('\n')) {
    const cells = line.split('|').map((cell) => cell.trim());
    if (!/^[a-z-]+\.ts$/.test(cells[1] ?? '')) continue;
    rows.set(
      cells[1],
      (cells.at(-2) ?? '').split(',').map((name) => name.trim().replaceAll('`', '')),
    );
  }
  return rows;
}

describe('the policy README’s table', () => {
  const rows = tableRows();
  // test/unit/lint/lint-layers.test.ts writes short-lived probe files into src/policy while it runs.
  const files = readdirSync(POLICY).filter(
    (name) => name.endsWith('.ts') && !name.startsWith('__lint_probe_'),
  );

  it('has a row for every policy file, and none for a file that is not there', () => {
    assert.deepEqual([...rows.keys()].sort(), files.sort());
  });

  it('names first, for each file, the test of the same name beside it', () => {
    const first = [...rows].filter(([file, tests]) => tests[0] !== file.replace(/\.ts$/, '.test.ts'));
    assert.deepEqual(first, []);
  });

  it('names only tests that are there (in test/unit/policy)', () => {
    const missing = [...rows.values()].flat().filter((test) => !existsSync(join(TESTS, test)));
    assert.deepEqual(missing, []);
  });
});
