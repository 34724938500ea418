// The first start builds the Temporal CLI with `go install` for minutes: findTemporalCli (scripts/
// temporal-cli.sh) must show what the build is doing every 10 s as it goes, then how long it took.
// Here the period is 3 s (LLMGW_PROGRESS_EVERY_S), so that the test takes 8 s, not 25.
import assert from 'node:assert/strict';
import { accessSync, constants, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { findTemporalCli } from '../../src/cli/dev/temporal-server.ts';
import { binFolder } from '../support/bin-folder.ts';

/** What scripts/temporal-cli.sh and the `go` below run: no temporal among them. */
const COMMANDS = [
  'bash',
  'chmod',
  'cut',
  'dirname',
  'env',
  'grep',
  'mkdir',
  'mktemp',
  'rm',
  'sed',
  'sh',
  'sleep',
  'tail',
];

const PERIOD_S = 3;

/**
 * A `go` that prints what `go install -x` prints while it downloads, then compiles, for 7.5 s in all.
 * It starts compiling between the first progress line (at 3 s, or up to a second late on a busy
 * machine) and the second (at 6 s, or a second early: the script counts whole seconds).
 */
const FAKE_GO = `#!/bin/sh
echo '# get https://proxy.golang.org/go.temporal.io/sdk/@v/v1.0.0.zip: 200 OK (0.1s)' >&2
sleep 4.5
echo '/usr/local/go/pkg/tool/linux_amd64/compile -o $WORK/b001/_pkg_.a -p github.com/temporalio/cli/cmd/temporal -lang=go1.25' >&2
sleep 3
printf '#!/bin/sh\\necho temporal\\n' > "$GOBIN/temporal"
chmod +x "$GOBIN/temporal"
`;

describe('findTemporalCli on a machine without the Temporal CLI', () => {
  const work = mkdtempSync(join(tmpdir(), 'llmgw-temporal-cli-'));
  const saved = {
    PATH: process.env.PATH,
    XDG_CACHE_HOME: process.env.XDG_CACHE_HOME,
    TEMPORAL_CLI: process.env.TEMPORAL_CLI,
    LLMGW_PROGRESS_EVERY_S: process.env.LLMGW_PROGRESS_EVERY_S,
  };
  after(() => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    rmSync(work, { recursive: true, force: true });
  });

  it('streams a line of progress every period while go install builds it, then how long it took', async () => {
    const bin = binFolder(join(work, 'bin'), COMMANDS);
    writeFileSync(join(bin, 'go'), FAKE_GO, { mode: 0o755 });
    // Our go, no temporal, an empty cache.
    process.env.PATH = bin;
    process.env.XDG_CACHE_HOME = join(work, 'cache');
    delete process.env.TEMPORAL_CLI;
    process.env.LLMGW_PROGRESS_EVERY_S = String(PERIOD_S);

    const heard: { at: number; line: string }[] = [];
    const cli = await findTemporalCli((line) => heard.push({ at: Date.now(), line }));
    const done = Date.now();

    assert.equal(cli, join(work, 'cache', 'llmgw', 'temporal-v1.5.1', 'temporal'));
    accessSync(cli, constants.X_OK);
    const progress = heard.filter(({ line }) => /building the Temporal CLI: \d+ s so far/.test(line));
    // The script wakes once a second and counts whole seconds of the clock: on a busy machine, where
    // its second stretches, a count may be one more than the period's (4 s, not 3 s).
    assert.equal(progress.length, 2, progress.map(({ line }) => line).join('\n'));
    assert.match(
      progress[0].line,
      /^temporal-cli: building the Temporal CLI: [34] s so far; downloading modules \(1 so far\)$/,
    );
    assert.match(
      progress[1].line,
      /^temporal-cli: building the Temporal CLI: [67] s so far; compiling: 1 packages so far, now github\.com\/temporalio\/cli\/cmd\/temporal \(1 modules downloaded\)$/,
    );
    assert.ok(done - progress[0].at >= 3_000, 'the first line came while the build went on, not at its end');
    assert.match(heard.at(-1)?.line ?? '', /^temporal-cli: building the Temporal CLI took [789] s$/);
  });
});
