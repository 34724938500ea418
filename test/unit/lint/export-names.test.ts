// Each name src/ exports is exported by one module: two `Admission`s or two `errorBody`s make a reader
// (and an editor's auto-import) pick between things that only share a name.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sourceFiles, withoutComments } from '../../../scripts/import-graph.ts';

const root = join(import.meta.dirname, '../../..');
const DECLARED =
  /^export\s+(?:declare\s+)?(?:default\s+)?(?:async\s+)?(?:const|let|function\*?|type|interface|class|enum|abstract\s+class)\s+([A-Za-z_$][\w$]*)/gm;

describe('the names src/ exports', () => {
  it('are each exported by one module', () => {
    const modules = new Map<string, Set<string>>();
    for (const file of sourceFiles(root)) {
      for (const [, name] of withoutComments(readFileSync(join(root, file), 'utf8')).matchAll(DECLARED)) {
        modules.set(name, (modules.get(name) ?? new Set()).add(file));
      }
    }
    assert.ok(modules.size > 500, `${modules.size} names`);
    const twice = [...modules]
      .filter(([, files]) => files.size > 1)
      .map(([name, files]) => `${name}: ${[...files].join(', ')}`);
    assert.deepEqual(twice, []);
  });
});
