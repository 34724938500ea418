// The layers biome.json enforces (`npm run lint`): probe files written into the tree for one Biome run,
// then removed. Each breaking probe must be reported under its rule, and the clean ones not at all.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, describe, it } from 'node:test';

const root = join(import.meta.dirname, '../../..');
const tag = `__lint_probe_${process.pid}__`;

const PROBES = {
  policyImportsStore: [
    `src/policy/${tag}.ts`,
    "import type { Sql } from '../store/db.ts';\nexport type P = Sql;\n",
  ],
  domainImportsZod: [`src/domain/${tag}.ts`, "import { z } from 'zod';\nexport const d = z.string();\n"],
  workflowImportsActivities: [
    `src/workflows/${tag}.ts`,
    "import { createActivities } from '../activities/index.ts';\nexport const w = createActivities;\n",
  ],
  agentImportsStore: [
    `src/agent/${tag}.ts`,
    "import type { Sql } from '../store/db.ts';\nexport type A = Sql;\n",
  ],
  cleanAgent: [
    `src/agent/${tag}clean.ts`,
    "import type { EngineSpec } from '../api/schemas/engine.ts';\nimport { tailLines } from './engine-log.ts';\nexport const c = [tailLines] as unknown as EngineSpec;\n",
  ],
  cycleA: [`src/${tag}a.ts`, `import { b } from './${tag}b.ts';\nexport const a = () => b;\n`],
  cycleB: [`src/${tag}b.ts`, `import { a } from './${tag}a.ts';\nexport const b = () => a;\n`],
  // Type-only imports vanish at run time, but a cycle of them still ties the two files together.
  typeCycleA: [`src/${tag}ta.ts`, `import type { B } from './${tag}tb.ts';\nexport type A = { b?: B };\n`],
  typeCycleB: [`src/${tag}tb.ts`, `import type { A } from './${tag}ta.ts';\nexport type B = { a?: A };\n`],
  cleanPolicy: [
    `src/policy/${tag}clean.ts`,
    "import { DIMENSIONS } from '../domain/resources.ts';\nimport { sum } from './resources.ts';\nexport const c = [DIMENSIONS, sum];\n",
  ],
  cleanWorkflow: [
    `src/workflows/${tag}clean.ts`,
    "import { sleep } from '@temporalio/workflow';\nimport type { Activities } from '../activities/types.ts';\n" +
      "import { EMPTY_MEMORY } from '../domain/snapshot.ts';\nexport const c = [sleep, EMPTY_MEMORY] as unknown as Activities;\n",
  ],
} as const;
type Probe = keyof typeof PROBES;

/** Biome's exit code and the rules it reported for each file (its header line: `path:line:col lint/RULE`). */
function lint(files: string[]): Promise<{ code: number; rules: Map<string, string[]> }> {
  return new Promise((resolve) => {
    const args = ['lint', '--colors=off', '--max-diagnostics=none', ...files];
    execFile(join(root, 'node_modules/.bin/biome'), args, { cwd: root }, (error, stdout, stderr) => {
      const rules = new Map<string, string[]>();
      for (const [, file, rule] of `${stdout}\n${stderr}`.matchAll(/^(\S+):\d+:\d+ lint\/\w+\/(\w+)/gm)) {
        rules.set(file, [...(rules.get(file) ?? []), rule]);
      }
      resolve({ code: typeof error?.code === 'number' ? error.code : 0, rules });
    });
  });
}

describe('the layers the linter enforces', () => {
  let result: Awaited<ReturnType<typeof lint>>;
  const rulesOf = (probe: Probe) => result.rules.get(PROBES[probe][0]) ?? [];

  before(async () => {
    const files = Object.values(PROBES).map(([file]) => file);
    try {
      for (const [file, text] of Object.values(PROBES)) writeFileSync(join(root, file), text);
      result = await lint(files);
    } finally {
      for (const file of files) rmSync(join(root, file), { force: true });
    }
  });

  it('fails the run', () => assert.equal(result.code, 1));

  it('refuses a policy file that imports the store', () => {
    assert.deepEqual(rulesOf('policyImportsStore'), ['noRestrictedImports']);
  });

  it('refuses a domain file that imports a framework', () => {
    assert.deepEqual(rulesOf('domainImportsZod'), ['noRestrictedImports']);
  });

  it('refuses a workflow file that imports the activities module itself (it would bundle the store)', () => {
    assert.deepEqual(rulesOf('workflowImportsActivities'), ['noRestrictedImports']);
  });

  it('refuses an agent file that imports the store (nodes reach the control plane through its API)', () => {
    assert.deepEqual(rulesOf('agentImportsStore'), ['noRestrictedImports']);
  });

  it('refuses two files that import each other', () => {
    assert.deepEqual(rulesOf('cycleA'), ['noImportCycles']);
    assert.deepEqual(rulesOf('cycleB'), ['noImportCycles']);
  });

  it('refuses two files that import only types of each other', () => {
    assert.deepEqual(rulesOf('typeCycleA'), ['noImportCycles']);
    assert.deepEqual(rulesOf('typeCycleB'), ['noImportCycles']);
  });

  it('passes a policy file on domain and itself, a workflow on Temporal, domain and activity types, an agent file on the API schemas', () => {
    assert.deepEqual(rulesOf('cleanPolicy'), []);
    assert.deepEqual(rulesOf('cleanWorkflow'), []);
    assert.deepEqual(rulesOf('cleanAgent'), []);
  });
});
