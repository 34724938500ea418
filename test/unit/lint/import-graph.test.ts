// The import graph of src/ against the layers of docs/architecture.md, types included: no cycle between
// folders (and top-level files), every import allowed by its row and every allowance used, biome.json
// holding the table's rules, and what no per-file rule can see: where imports lead through other folders.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import {
  cyclesOf,
  type Import,
  nodeOf,
  sourceFiles,
  specifiersOf,
  srcImports,
} from '../../../scripts/import-graph.ts';
import {
  biomeOverrides,
  layerOverridesOf,
  layerViolations,
  readRepositoryLayers,
} from '../../../scripts/layers.ts';

const root = join(import.meta.dirname, '../../..');
const imports = srcImports(root);
const ours = imports.filter(({ to }) => to.startsWith('src/'));
const layers = readRepositoryLayers(root);

/** The folders and top-level files a node reaches through `followed` imports, itself left out. */
function reach(start: string, followed: readonly Import[]): Set<string> {
  const seen = new Set<string>();
  const files = followed.filter(({ from }) => nodeOf(from) === start).map(({ to }) => to);
  const visited = new Set<string>();
  while (files.length > 0) {
    const file = files.pop() as string;
    if (visited.has(file)) continue;
    visited.add(file);
    if (nodeOf(file) !== start) seen.add(nodeOf(file));
    for (const { from, to } of followed) if (from === file) files.push(to);
  }
  return seen;
}

describe('the reader of imports', () => {
  it('reads imports, type imports, export-from, bare and dynamic imports over lines, and no commented one', () => {
    const text = [
      "import { a } from './a.ts';",
      "import type { B } from '../b.ts';",
      'import {',
      '  type C,',
      '  type D,',
      "} from './cd.ts';",
      "export { e } from './e.ts';",
      "export type { F } from './f.ts';",
      "import './g.ts';",
      "// import { h } from './h.ts';",
      "/* import { i } from './i.ts'; */",
      "const url = 'http://example.com'; // import { j } from './j.ts';",
      "const k = await import('./k.ts');",
      // A template literal's text is not code, even where it reads as an import.
      "const s = `import { l } from './l.ts'; $" + '{k}`;',
    ].join('\n');
    assert.deepEqual(specifiersOf(text), [
      { specifier: './a.ts', typeOnly: false },
      { specifier: '../b.ts', typeOnly: true },
      { specifier: './cd.ts', typeOnly: true },
      { specifier: './e.ts', typeOnly: false },
      { specifier: './f.ts', typeOnly: true },
      { specifier: './g.ts', typeOnly: false },
      { specifier: './k.ts', typeOnly: false },
    ]);
  });

  it('finds a cycle of two or more nodes, and none in a graph without', () => {
    assert.deepEqual(
      cyclesOf([
        ['a', 'b'],
        ['b', 'c'],
        ['c', 'a'],
        ['c', 'd'],
      ]),
      [['a', 'b', 'c']],
    );
    assert.deepEqual(
      cyclesOf([
        ['a', 'b'],
        ['a', 'c'],
        ['b', 'c'],
      ]),
      [],
    );
  });

  it('reads the imports of every file of src/', () => {
    assert.ok(sourceFiles(root).length > 250);
    assert.ok(imports.filter(({ typeOnly }) => typeOnly).length > 100, 'type imports are counted');
  });
});

describe('the folders of src/', () => {
  it('import one another without a cycle, counting type imports', () => {
    const edges = ours.map(({ from, to }) => [nodeOf(from), nodeOf(to)] as const);
    assert.deepEqual(cyclesOf(edges.filter(([from, to]) => from !== to)), []);
  });

  it('each import what their row of docs/architecture.md allows, and each allowance is used', () => {
    assert.deepEqual(layerViolations(layers, imports), []);
  });

  it('are held to their rows by biome.json, as `npm run layers` writes it from the table', () => {
    const biome = JSON.parse(readFileSync(join(root, 'biome.json'), 'utf8'));
    assert.deepEqual(
      layerOverridesOf(biome),
      biomeOverrides(layers, sourceFiles(root)),
      'run: npm run layers',
    );
  });

  it('leave the agent no path to the store or the reconcilers, through any folder', () => {
    const reached = reach('src/agent/', ours);
    assert.ok(reached.has('src/contracts/'), [...reached].join(', '));
    assert.equal(reached.has('src/store/'), false);
    assert.equal(reached.has('src/reconcilers/'), false);
  });

  it("bundle into the workflows' sandbox nothing but the domain (their imports that are not types alone)", () => {
    const values = ours.filter(({ typeOnly }) => !typeOnly);
    assert.deepEqual([...reach('src/workflows/', values)], ['src/domain/']);
  });
});
