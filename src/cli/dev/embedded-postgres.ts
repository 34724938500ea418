import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chownSync, existsSync, mkdirSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { childEnvironment, type Service, startService } from '../../child-process.ts';
import { connect, type Sql } from '../../store/db.ts';
import {
  type PostgresBinaries,
  postgresUser,
  type RunAs,
  reachableBinaries,
  reachableDataFolder,
} from './embedded-postgres-as-root.ts';
import { keptPassword } from './embedded-postgres-password.ts';

export interface EmbeddedStore {
  url: string;
  stop(): Promise<void>;
}

const USER = 'llmgw';
/** The password every data folder had before each got its own: such a folder is moved to its own at start. */
const FORMER_PASSWORD = 'llmgw';
const INVALID_PASSWORD = '28P01';

/**
 * Runs Postgres (the binaries the embedded-postgres package brings) with its data in `dir`, kept
 * across restarts when `persistent`. The password of its user is random per data folder and kept in
 * `<dir>.password` (mode 0600), so that no other local user can log in. Postgres gets a scrubbed
 * environment; as root it runs as user `postgres`, from places that user reaches (embedded-postgres-as-root.ts).
 * Used by `llmgw dev` and the test harness; production gives DATABASE_URL instead.
 */
export async function startEmbeddedPostgres(options: {
  dir: string;
  port: number;
  persistent: boolean;
  log?: (line: string) => void;
}): Promise<EmbeddedStore> {
  const { dir, port } = options;
  const log = options.log ?? (() => {});
  const runAs = await postgresUser();
  const binaries = runAs
    ? await reachableBinaries(await postgresBinaries(), runAs)
    : await postgresBinaries();
  const data = runAs ? await reachableDataFolder(dir, runAs, log) : dir;
  const passwordFile = `${dir}.password`;
  const password = keptPassword(passwordFile);
  if (!existsSync(join(data, 'PG_VERSION'))) await initialise(binaries.initdb, data, password, runAs, log);

  const postgres = startService(binaries.postgres, ['-D', data, '-p', String(port)], {
    stopSignal: 'SIGINT', // a fast shutdown, which finishes by itself when this process has exited
    log,
    ...runAs,
  });
  const url = (database: string, secret = password) =>
    `postgres://${USER}:${encodeURIComponent(secret)}@127.0.0.1:${port}/${database}`;
  const stop = async () => {
    await postgres.stop();
    if (!options.persistent) {
      rmSync(data, { recursive: true, force: true });
      rmSync(dir, { recursive: true, force: true });
      rmSync(passwordFile, { force: true });
    }
  };
  try {
    const answered = await firstAnswer(url('postgres'), url('postgres', FORMER_PASSWORD), postgres);
    if (answered === 'neither') {
      throw new Error(
        `Postgres in ${dir} refuses the password kept in ${passwordFile}; restore that file, or move ${dir} away to start afresh`,
      );
    }
    if (answered === 'former') {
      log(`moving ${dir} from the former fixed password to its own, kept in ${passwordFile}`);
      await onceConnected(url('postgres', FORMER_PASSWORD), (sql) =>
        sql.unsafe(`alter role ${USER} password '${password}'`),
      );
    }
    await onceConnected(url('postgres'), async (sql) => {
      const [found] = await sql`select 1 from pg_database where datname = 'llmgw'`;
      if (!found) await sql`create database llmgw`;
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: url('llmgw'), stop };
}

/** The binaries come in a package per platform, a dependency of embedded-postgres. */
async function postgresBinaries(): Promise<PostgresBinaries> {
  const platform = process.platform === 'win32' ? 'windows' : process.platform;
  const embedded = createRequire(import.meta.url).resolve('embedded-postgres');
  const entry = createRequire(embedded).resolve(`@embedded-postgres/${platform}-${process.arch}`);
  return import(pathToFileURL(entry).href);
}

const run = promisify(execFile);

/** Creates the data folder (initdb), whose user `llmgw` logs in with `password` (SCRAM). */
async function initialise(
  initdb: string,
  dir: string,
  password: string,
  runAs: RunAs | undefined,
  log: (line: string) => void,
) {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // initdb reads the password from a file only it may read, removed at once.
  const passwordFile = join(dirname(dir), `.initdb-${randomBytes(6).toString('hex')}`);
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (runAs) {
    chownSync(dir, runAs.uid, runAs.gid);
    chownSync(passwordFile, runAs.uid, runAs.gid);
  }
  try {
    const { stdout } = await run(
      initdb,
      [`--pgdata=${dir}`, '--auth=scram-sha-256', `--username=${USER}`, `--pwfile=${passwordFile}`],
      { env: childEnvironment(), ...runAs },
    );
    for (const line of stdout.split('\n')) if (line.trim()) log(line);
  } finally {
    unlinkSync(passwordFile);
  }
}

/**
 * Waits until Postgres answers, and says with which password: the kept one, or else the former fixed
 * one (a data folder made before each had its own); 'neither' when it refuses both.
 */
async function firstAnswer(
  url: string,
  formerUrl: string,
  postgres: Service,
): Promise<'kept' | 'former' | 'neither'> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (postgres.child.exitCode !== null) {
      throw new Error(
        `Postgres exited (${postgres.child.exitCode}): ${postgres.output().trim().slice(-600)}`,
      );
    }
    try {
      await onceConnected(url, (sql) => sql`select 1`);
      return 'kept';
    } catch (error) {
      if ((error as { code?: string }).code === INVALID_PASSWORD) {
        return onceConnected(formerUrl, (sql) => sql`select 1`).then(
          () => 'former' as const,
          () => 'neither' as const,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw new Error(`Postgres did not answer within 60 s: ${postgres.output().trim().slice(-600)}`);
}

async function onceConnected(url: string, work: (sql: Sql) => Promise<unknown>) {
  const sql = connect(url, { max: 1 });
  try {
    await work(sql);
  } finally {
    await sql.end({ timeout: 1 });
  }
}
