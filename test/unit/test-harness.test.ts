// What `npm test` and `npm run test:unit` run (test/run.ts), and that a unit run starts no service.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { SERVICE_ENV, sharedServices } from '../support/services.ts';
import { TEST_REPORTERS } from '../support/test-reporters.ts';
import { selectTests } from '../support/test-selection.ts';
import { unitGroups } from '../support/unit-groups.ts';

const FILES = [
  'test/unit/b.test.ts',
  'test/integration/api-models.test.ts',
  'test/unit/workflows/replay.test.ts',
  'test/unit/policy/decide.test.ts',
  'test/unit/a.test.ts',
];

describe('selectTests', () => {
  const cases: Record<string, { args: string[]; want: string[] }> = {
    'no argument: every file, sorted': { args: [], want: [...FILES].sort() },
    'parts of paths take the files that hold one': {
      args: ['api-models', 'policy/'],
      want: ['test/integration/api-models.test.ts', 'test/unit/policy/decide.test.ts'],
    },
    '!PART leaves out the files that hold it (test:unit without the workflows)': {
      args: ['test/unit/', '!test/unit/workflows/'],
      want: ['test/unit/a.test.ts', 'test/unit/b.test.ts', 'test/unit/policy/decide.test.ts'],
    },
    '!PART alone leaves out from every file': {
      args: ['!test/unit/'],
      want: ['test/integration/api-models.test.ts'],
    },
  };
  for (const [name, c] of Object.entries(cases))
    it(name, () => assert.deepEqual(selectTests(FILES, c.args), c.want));
});

describe('unitGroups', () => {
  const dir = mkdtempSync(join(tmpdir(), 'llmgw-unit-groups-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('runs those in test/unit alone, first; then the files of each folder beneath it, most first', () => {
    const files = [
      'test/unit/a.test.ts',
      'test/unit/metrics/state.test.ts',
      'test/unit/policy/decide.test.ts',
      'test/unit/policy/view.test.ts',
    ];
    const given = unitGroups('/repo', files, dir);
    assert.deepEqual(given, [
      join(dir, '0-test-unit-a.mjs'),
      join(dir, '1-test-unit-policy.mjs'),
      join(dir, '2-test-unit-metrics.mjs'),
    ]);
    const url = (file: string) => pathToFileURL(join('/repo', file)).href;
    assert.equal(readFileSync(given[0], 'utf8'), `import "${url('test/unit/a.test.ts')}";\n`);
    assert.equal(
      readFileSync(given[1], 'utf8'),
      `import "${url('test/unit/policy/decide.test.ts')}";\nimport "${url('test/unit/policy/view.test.ts')}";\n`,
    );
  });

  it('names the entries so that sorted, as node sorts the files it runs, they keep their order', () => {
    const files = Array.from(
      { length: 12 },
      (_, index) => `test/unit/${String.fromCharCode(108 - index)}.test.ts`,
    );
    const given = unitGroups('/repo', files, dir);
    assert.deepEqual([...given].sort(), given);
    assert.equal(given.length, 12);
  });
});

describe('a unit run', () => {
  it('refuses a test the services, rather than start them', async () => {
    // Addresses as `npm test` gives them: without the refusal, sharedServices would hand them over.
    const set = {
      [SERVICE_ENV.none]: '1',
      [SERVICE_ENV.database]: 'postgres://nowhere',
      [SERVICE_ENV.temporal]: 'nowhere:1',
    };
    const saved = Object.fromEntries(Object.keys(set).map((name) => [name, process.env[name]]));
    Object.assign(process.env, set);
    try {
      await assert.rejects(sharedServices(), /belongs in test\/integration, not test\/unit/);
    } finally {
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });
});

const ROOT = join(import.meta.dirname, '..', '..');

describe('the failures at the end of a run', () => {
  const work = mkdtempSync(join(tmpdir(), 'llmgw-failures-'));
  after(() => rmSync(work, { recursive: true, force: true }));
  const file = join(work, 'two.test.ts');
  const run = (lines: string[]) => {
    writeFileSync(
      file,
      [
        "import assert from 'node:assert/strict';",
        "import { describe, it } from 'node:test';",
        ...lines,
      ].join('\n'),
    );
    return spawnSync(process.execPath, ['--import', 'tsx', '--test', ...TEST_REPORTERS, file], {
      cwd: ROOT,
      encoding: 'utf8',
      // Inside a test, node marks its children as the runner's; this one is a run of its own.
      env: { ...process.env, NODE_TEST_CONTEXT: undefined },
    });
  };

  it('are listed last, one line each with file, name and error; a suite is not listed for its tests', () => {
    const answer = run([
      "describe('a suite', () => {",
      "  it('passes', () => {});",
      "  it('fails here', () => assert.equal(1, 2, 'one is not two'));",
      '});',
      "it('throws', () => { throw new Error('the second line is left out\\nhere'); });",
    ]);
    assert.equal(answer.status, 1);
    assert.ok(answer.stdout.includes('ok 1 - passes'), 'TAP still comes first');
    assert.deepEqual(answer.stdout.trimEnd().split('\n').slice(-3), [
      '2 failed tests:',
      `  ${relative(ROOT, file)}: fails here: one is not two`,
      `  ${relative(ROOT, file)}: throws: the second line is left out`,
    ]);
  });

  it("say nothing when nothing failed: the run ends with TAP's counts", () => {
    const answer = run(["it('passes', () => {});"]);
    assert.equal(answer.status, 0);
    assert.match(answer.stdout.trimEnd().split('\n').at(-1) ?? '', /^# duration_ms /);
  });
});
