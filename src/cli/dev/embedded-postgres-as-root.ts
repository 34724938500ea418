import { execFile } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { childEnvironment } from '../../child-process.ts';

/**
 * Postgres refuses to run as root, so as root llmgw runs it as user `postgres`. That user must reach the
 * binaries and the data folder, which a clone under /root or a `mktemp -d` folder (both 0700) hides
 * from it: what it cannot reach is then copied (the binaries, once per version) or kept (the data)
 * in a folder of root's that every user may pass through.
 */
export interface RunAs {
  uid: number;
  gid: number;
}

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

const BINARIES_CACHE = '/var/cache/llmgw';
const DATA_HOME = '/var/lib/llmgw';

const run = promisify(execFile);

/** The `postgres` user (created when missing) when this process is root; else none (Postgres runs as us). */
export async function postgresUser(): Promise<RunAs | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const env = childEnvironment();
  const ids = async () => ({
    uid: Number((await run('id', ['-u', 'postgres'], { env })).stdout),
    gid: Number((await run('id', ['-g', 'postgres'], { env })).stdout),
  });
  try {
    return await ids();
  } catch {
    await run('groupadd', ['postgres'], { env });
    await run('useradd', ['-g', 'postgres', 'postgres'], { env });
    return ids();
  }
}

/** The binaries where `runAs` can run them: in place, else a copy in BINARIES_CACHE made once. */
export async function reachableBinaries(binaries: PostgresBinaries, runAs: RunAs): Promise<PostgresBinaries> {
  if ((await reaches(runAs, binaries.initdb)) && (await reaches(runAs, binaries.postgres))) return binaries;
  // The package's native/ folder holds bin/, lib/ and share/, which the binaries find relative to themselves.
  const native = dirname(dirname(binaries.postgres));
  const { version } = JSON.parse(readFileSync(join(dirname(native), 'package.json'), 'utf8'));
  const copy = join(BINARIES_CACHE, `postgres-${version}-${process.platform}-${process.arch}`);
  const inCopy = { initdb: join(copy, 'bin', 'initdb'), postgres: join(copy, 'bin', 'postgres') };
  try {
    rootsFolder(BINARIES_CACHE);
    if (!existsSync(inCopy.postgres)) copyAside(native, copy);
  } catch (error) {
    throw new Error(
      `Postgres runs as user postgres, which cannot pass through ${await closedFolder(runAs, binaries.postgres)} to its binaries, and they could not be copied to ${copy} (${reason(error)}): clone llmgw into a folder every user may pass through, or make ${BINARIES_CACHE} writable by root`,
    );
  }
  return inCopy;
}

/** Copies `from` to `to` through a folder aside, renamed at the end: a copy cut short is never taken for a whole one. */
function copyAside(from: string, to: string) {
  const partial = `${to}.partial-${process.pid}`;
  cpSync(from, partial, { recursive: true, verbatimSymlinks: true });
  chmodSync(partial, 0o755);
  try {
    renameSync(partial, to);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(to)) throw error; // else another llmgw made the same copy meanwhile
  }
}

/**
 * The data folder to give Postgres for `dir`: `dir` itself when `runAs` reaches it; else a folder in
 * DATA_HOME that `dir` becomes a link to (found again through that link on the next start).
 */
export async function reachableDataFolder(
  dir: string,
  runAs: RunAs,
  log: (line: string) => void,
): Promise<string> {
  const parent = dirname(dir);
  mkdirSync(parent, { recursive: true });
  // llmgw's own folder (LLMGW_HOME, a test's temporary one): user postgres may pass through it.
  chmodSync(parent, statSync(parent).mode | 0o111);
  if (await reaches(runAs, parent)) return dir;
  const found = lstatSync(dir, { throwIfNoEntry: false });
  if (found?.isSymbolicLink()) return resolve(parent, readlinkSync(dir));
  const closed = await closedFolder(runAs, dir);
  if (found) {
    throw new Error(
      `Postgres runs as user postgres, which cannot pass through ${closed} to its data in ${dir}: move that folder where every user may pass through and set LLMGW_HOME to its parent, or run chmod o+x ${closed}`,
    );
  }
  try {
    rootsFolder(DATA_HOME);
    const data = mkdtempSync(join(DATA_HOME, 'postgres-'));
    symlinkSync(data, dir);
    log(`user postgres cannot pass through ${closed}: the data lives in ${data}, and ${dir} links to it`);
    return data;
  } catch (error) {
    throw new Error(
      `Postgres runs as user postgres, which cannot pass through ${closed} to ${dir}, and no data folder could be made in ${DATA_HOME} (${reason(error)}): set LLMGW_HOME to a folder every user may pass through`,
    );
  }
}

/** Whether `runAs` can pass through every folder to `path`, and enter it (a folder) or run it (a file). */
function reaches(runAs: RunAs, path: string): Promise<boolean> {
  return run('test', ['-x', path], { env: childEnvironment(), ...runAs }).then(
    () => true,
    () => false,
  );
}

/** The first folder on the way to `path` that `runAs` cannot pass through (for messages). */
async function closedFolder(runAs: RunAs, path: string): Promise<string> {
  const folders: string[] = [];
  for (let folder = dirname(path); !folders.includes(folder); folder = dirname(folder))
    folders.unshift(folder);
  for (const folder of folders) if (!(await reaches(runAs, folder))) return folder;
  return dirname(path);
}

/** Makes `folder` root's, open to all for reading, refusing one that someone else could have filled. */
function rootsFolder(folder: string) {
  mkdirSync(folder, { recursive: true, mode: 0o755 });
  const { uid, mode } = statSync(folder);
  if (uid !== 0 || mode & 0o022) throw new Error(`${folder} is not root's alone`);
  chmodSync(folder, 0o755);
}

const reason = (error: unknown) =>
  (error as { code?: string }).code ?? (error instanceof Error ? error.message : String(error));
