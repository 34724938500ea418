// The layers biome.json enforces (`npm run lint`): probe files written into a copy of the tree's layout
// (a temporary folder with the repository's biome.json), linted in one Biome run. Every override of a
// layer, at every depth of its folder, gets a probe that imports what its row of docs/architecture.md
// refuses, and one that imports what it allows; each breaking probe must be reported under its rule,
// and the clean ones not at all.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { before, describe, it } from 'node:test';
import { nodeOf } from '../../../scripts/import-graph.ts';
import { type Layer, layerOverridesOf, readRepositoryLayers } from '../../../scripts/layers.ts';

const root = join(import.meta.dirname, '../../..');
const biome = JSON.parse(readFileSync(join(root, 'biome.json'), 'utf8'));
const layers = readRepositoryLayers(root);

/** A file an override's glob covers: `src/api/*\/*` -> `src/api/probe/<name>`; a file's own glob is the file. */
const fileUnder = (glob: string, name: string) =>
  glob.endsWith('*') ? glob.replace(/\*\//g, 'probe/').replace(/\*$/, name) : glob;

/** `target` (a folder or file of src/) as a file imported from `file`, both from the repository root. */
function specifier(file: string, target: string) {
  const path = target.endsWith('/') ? `${target}probe.ts` : target;
  const relative = posix.relative(posix.dirname(file), path);
  return relative.startsWith('.') ? relative : `./${relative}`;
}

const importing = (specifiers: string[]) =>
  `${specifiers.map((from, i) => `import type { T${i} } from '${from}';`).join('\n')}\nexport type P = [${specifiers.map((_, i) => `T${i}`).join(', ')}];\n`;

/** What the row refuses of src/ first (in the table's order), and a package when it names its packages. */
function refused(layer: Layer): string[] {
  const other = layers.find(
    ({ node }) => node !== layer.node && layer.imports !== 'any' && !layer.imports.includes(node),
  );
  return [...(other ? [other.node] : []), ...(layer.packages === 'any' ? [] : ['zod'])];
}

/** What the row allows: the first of src/ it names (else a file of its own), and a package it may import. */
function allowed(layer: Layer): string[] {
  const ours = layer.imports === 'any' || layer.imports.length === 0 ? [] : [layer.imports[0]];
  const packages = layer.packages === 'any' ? ['node:fs'] : layer.packages.slice(0, 1);
  return [...ours, ...packages];
}

interface Probe {
  file: string;
  text: string;
  /** The rules Biome must report for the file. */
  rules: string[];
}

function layerProbes(): Probe[] {
  return layerOverridesOf(biome).flatMap(({ includes: [glob] }) => {
    const layer = layers.find(({ node }) => node === nodeOf(glob.replace(/\*/g, 'probe')));
    assert.ok(layer, `${glob}: no row of docs/architecture.md's layers covers it`);
    const [broken, clean] = [fileUnder(glob, 'broken.ts'), fileUnder(glob, 'clean.ts')];
    const own = layer.node.endsWith('/') ? [specifier(clean, `${dirname(clean)}/sibling.ts`)] : [];
    const cleanImports = [
      ...allowed(layer).map((t) => (t.startsWith('src/') ? specifier(clean, t) : t)),
      ...own,
    ];
    const brokenImports = refused(layer).map((t) => (t.startsWith('src/') ? specifier(broken, t) : t));
    // A top-level file's glob is the file itself: its two probes take turns at that path.
    return layer.node.endsWith('/')
      ? [
          {
            file: broken,
            text: importing(brokenImports),
            rules: brokenImports.map(() => 'noRestrictedImports'),
          },
          { file: clean, text: importing(cleanImports), rules: [] },
        ]
      : [
          {
            file: broken,
            text: importing(brokenImports),
            rules: brokenImports.map(() => 'noRestrictedImports'),
          },
        ];
  });
}

const NAMED: Record<string, Probe> = {
  policyImportsStore: {
    file: 'src/policy/imports-store.ts',
    text: "import type { Sql } from '../store/db.ts';\nexport type P = Sql;\n",
    rules: ['noRestrictedImports'],
  },
  domainImportsZod: {
    file: 'src/domain/imports-zod.ts',
    text: "import { z } from 'zod';\nexport const d = z.string();\n",
    rules: ['noRestrictedImports'],
  },
  workflowImportsActivities: {
    file: 'src/workflows/imports-activities.ts',
    text: "import { createActivities } from '../activities/index.ts';\nexport const w = createActivities;\n",
    rules: ['noRestrictedImports'],
  },
  agentImportsStore: {
    file: 'src/agent/imports-store.ts',
    text: "import type { Sql } from '../store/db.ts';\nexport type A = Sql;\n",
    rules: ['noRestrictedImports'],
  },
  contractsImportApi: {
    file: 'src/contracts/schemas/imports-api.ts',
    text: "import type { ApiDeps } from '../../api/deps.ts';\nexport type C = ApiDeps;\n",
    rules: ['noRestrictedImports'],
  },
  apiImportsConsole: {
    file: 'src/api/routes/imports-console.ts',
    text: "import { consoleRouter } from '../../console/index.tsx';\nexport const a = consoleRouter;\n",
    rules: ['noRestrictedImports'],
  },
  cleanWorkflow: {
    file: 'src/workflows/clean-named.ts',
    text:
      "import { sleep } from '@temporalio/workflow';\nimport type { Activities } from '../activities/types.ts';\n" +
      "import { EMPTY_MEMORY } from '../domain/snapshot.ts';\nexport const c = [sleep, EMPTY_MEMORY] as unknown as Activities;\n",
    rules: [],
  },
  cycleA: {
    file: 'src/cycle-a.ts',
    text: "import { b } from './cycle-b.ts';\nexport const a = () => b;\n",
    rules: ['noImportCycles'],
  },
  cycleB: {
    file: 'src/cycle-b.ts',
    text: "import { a } from './cycle-a.ts';\nexport const b = () => a;\n",
    rules: ['noImportCycles'],
  },
  // Type-only imports vanish at run time, but a cycle of them still ties the two files together.
  typeCycleA: {
    file: 'src/type-cycle-a.ts',
    text: "import type { B } from './type-cycle-b.ts';\nexport type A = { b?: B };\n",
    rules: ['noImportCycles'],
  },
  typeCycleB: {
    file: 'src/type-cycle-b.ts',
    text: "import type { A } from './type-cycle-a.ts';\nexport type B = { a?: A };\n",
    rules: ['noImportCycles'],
  },
};

/** Biome's exit code and the rules it reported for each file (its header line: `path:line:col lint/RULE`). */
function lint(cwd: string, files: string[]): Promise<{ code: number; rules: Map<string, string[]> }> {
  return new Promise((resolve) => {
    const args = ['lint', '--vcs-enabled=false', '--colors=off', '--max-diagnostics=none', ...files];
    execFile(join(root, 'node_modules/.bin/biome'), args, { cwd }, (error, stdout, stderr) => {
      const rules = new Map<string, string[]>();
      for (const [, file, rule] of `${stdout}\n${stderr}`.matchAll(/^(\S+):\d+:\d+ lint\/\w+\/(\w+)/gm)) {
        rules.set(file, [...(rules.get(file) ?? []), rule]);
      }
      resolve({ code: typeof error?.code === 'number' ? error.code : 0, rules });
    });
  });
}

/** Lints the probes in a fresh copy of the layout with the repository's biome.json. */
async function lintProbes(probes: Probe[]) {
  const dir = mkdtempSync(join(tmpdir(), 'llmgw-lint-layers-'));
  try {
    writeFileSync(join(dir, 'biome.json'), JSON.stringify(biome));
    for (const { file, text } of probes) {
      mkdirSync(join(dir, dirname(file)), { recursive: true });
      writeFileSync(join(dir, file), text);
    }
    return await lint(
      dir,
      probes.map(({ file }) => file),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the layers the linter enforces', () => {
  const probes = layerProbes();
  // A top-level file's override covers that one path: its clean probe runs in a second copy.
  const topLevelClean: Probe[] = layers
    .filter(({ node }) => !node.endsWith('/') && probes.some(({ file }) => file === node))
    .map((layer) => {
      const imports = allowed(layer).map((t) => (t.startsWith('src/') ? specifier(layer.node, t) : t));
      return { file: layer.node, text: importing(imports), rules: [] };
    });
  let result: Awaited<ReturnType<typeof lint>>;
  let cleanTopLevel: Awaited<ReturnType<typeof lint>>;

  before(async () => {
    [result, cleanTopLevel] = await Promise.all([
      lintProbes([...probes, ...Object.values(NAMED)]),
      lintProbes(topLevelClean),
    ]);
  });

  it('fails the run', () => assert.equal(result.code, 1));

  it("probes every layer's rule, at every depth of its folder", () => {
    const probed = new Set(probes.map(({ file }) => nodeOf(file)));
    const ruled = layers.filter(({ imports, packages }) => imports !== 'any' || packages !== 'any');
    assert.deepEqual(
      ruled.map(({ node }) => node).filter((node) => !probed.has(node)),
      [],
    );
    assert.ok(
      probes.some(({ file }) => file.startsWith('src/api/probe/probe/')),
      'the API is probed 2 levels down',
    );
  });

  it('refuses, in every layer, an import its row does not allow, and passes one it does', () => {
    const wrong = probes
      .map(({ file, rules }) => ({ file, expected: rules, reported: result.rules.get(file) ?? [] }))
      .filter(({ expected, reported }) => JSON.stringify(expected) !== JSON.stringify(reported));
    assert.deepEqual(wrong, []);
    assert.ok(probes.filter(({ rules }) => rules.length > 0).length >= 20, `${probes.length} probes`);
  });

  it('passes a top-level file that imports what its row allows', () => {
    for (const { file } of topLevelClean) assert.deepEqual(cleanTopLevel.rules.get(file) ?? [], [], file);
  });

  it('refuses a policy file on the store, a domain file on a framework, a workflow on the activities module (it would bundle the store), an agent on the store, contracts on the API, the API on the console', () => {
    for (const name of [
      'policyImportsStore',
      'domainImportsZod',
      'workflowImportsActivities',
      'agentImportsStore',
      'contractsImportApi',
      'apiImportsConsole',
    ]) {
      assert.deepEqual(result.rules.get(NAMED[name].file) ?? [], ['noRestrictedImports'], name);
    }
  });

  it('passes a workflow on Temporal, domain and the activity types', () => {
    assert.deepEqual(result.rules.get(NAMED.cleanWorkflow.file) ?? [], []);
  });

  it('refuses two files that import each other, values or types only', () => {
    for (const name of ['cycleA', 'cycleB', 'typeCycleA', 'typeCycleB']) {
      assert.deepEqual(result.rules.get(NAMED[name].file) ?? [], ['noImportCycles'], name);
    }
  });
});
