// docs/architecture.md names files as they are: each path it names exists, and the life of a load
// report stays short enough to hold in mind.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const root = join(import.meta.dirname, '..', '..', '..');
const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');

/** The paths of the clone a text names in code spans: `src/...`, `test/...` and the like. */
function pathsNamed(text: string): string[] {
  const spans = [...text.matchAll(/`((?:src|test|bench|scripts|deploy|docs)\/[^`\s]*)`/g)];
  return [...new Set(spans.map(([, path]) => path))];
}

describe('docs/architecture.md', () => {
  it('names only paths that exist', () => {
    const named = pathsNamed(doc);
    assert.ok(named.length >= 20, `it names ${named.length} paths: the pattern finds them`);
    assert.deepEqual(
      named.filter((path) => !existsSync(join(root, path))),
      [],
    );
  });

  it('follows a load report through at most 6 files at the top level, each one a path', () => {
    const section = doc.split('## The life of a load report')[1]?.split('\n## ')[0] ?? '';
    const steps = section.split('\n').filter((line) => /^\d+\. /.test(line));
    assert.ok(steps.length > 0 && steps.length <= 6, `${steps.length} steps`);
    for (const step of steps) assert.match(step, /^\d+\. `src\/[^`]+\.ts`/);
  });
});
