// docs/architecture.md names files as they are: each path it names exists, every folder and top-level
// file of src/ has a row in its layers (and a line in the README's layout), and the life of a load
// report stays short enough to hold in mind.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { readLayers } from '../../../scripts/layers.ts';

const root = join(import.meta.dirname, '..', '..', '..');
const doc = readFileSync(join(root, 'docs', 'architecture.md'), 'utf8');

/** Each folder of src/ (`src/api/`) and each file at its top (`src/config.ts`). */
const srcNodes = readdirSync(join(root, 'src'), { withFileTypes: true })
  .map((entry) => (entry.isDirectory() ? `src/${entry.name}/` : `src/${entry.name}`))
  .sort();

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

  it('has a row in its layers for every folder and top-level file of src/, and none for another', () => {
    const rows = readLayers(doc).map(({ node }) => node);
    assert.deepEqual([...rows].sort(), srcNodes);
  });

  it("has every folder and top-level file of src/ in the README's layout", () => {
    const layout =
      readFileSync(join(root, 'README.md'), 'utf8').split('## Layout')[1]?.split('\n## ')[0] ?? '';
    const named = (node: string) =>
      node.endsWith('/')
        ? new RegExp(`^${node} `, 'm').test(layout)
        : layout.includes(node.slice('src/'.length));
    assert.deepEqual(
      srcNodes.filter((node) => !named(node)),
      [],
    );
  });

  it("follows a load report from the gateway's count to the placement in at most 8 files, each one a path", () => {
    const section = doc.split('## The life of a load report')[1]?.split('\n## ')[0] ?? '';
    const files = section
      .split('\n')
      .map((line) => /^\| \d+ \| `(src\/[^`]+\.ts)` \|/.exec(line)?.[1])
      .filter((file) => file !== undefined);
    assert.ok(files.length > 0 && files.length <= 8, `${files.length} files`);
    assert.equal(files[0], 'src/gateway/load-reporter.ts', "it starts at the gateway's count");
    assert.ok(files.includes('src/placement/reserve.ts'), 'it reaches the placement');
    for (const file of files) assert.ok(existsSync(join(root, file)), file);
  });
});
