import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EmbeddedStore, startEmbeddedPostgres } from '../../src/cli/dev/embedded-postgres.ts';
import { type TemporalKind, temporalKind } from '../../src/cli/dev/options.ts';
import { freePort, freePortBlock } from '../../src/cli/dev/ports.ts';
import {
  AUTHORIZING_SERVER_PORTS,
  buildTemporalServer,
  startTemporalPostgresServer,
  TEMPORAL_SERVER_PORTS,
  type TemporalAuthorization,
  temporalDatabaseUrl,
} from '../../src/cli/dev/temporal-postgres-server.ts';
import { findTemporalCli, startTemporalDevServer } from '../../src/cli/dev/temporal-server.ts';
import { newSecret } from '../../src/contracts/secrets.ts';

export interface Services {
  /** The `llmgw` database of a Postgres the tests may create databases in. */
  databaseUrl: string;
  temporalAddress: string;
  stop(): Promise<void>;
}

export const SERVICE_ENV = {
  database: 'LLMGW_TEST_DATABASE_URL',
  temporal: 'LLMGW_TEST_TEMPORAL_ADDRESS',
  /** Set by a run of test/unit alone: a test that asks for the services then fails instead of starting them. */
  none: 'LLMGW_TEST_NO_SERVICES',
  /** Which Temporal the tests run on: `dev` (the default) or `server` (Temporal server on the Postgres). */
  temporalKind: 'LLMGW_TEST_TEMPORAL',
} as const;

/** The Temporal this run's tests take (LLMGW_TEST_TEMPORAL), or the sentence saying what it takes. */
export const testTemporal = (): TemporalKind =>
  temporalKind(process.env[SERVICE_ENV.temporalKind], SERVICE_ENV.temporalKind);

/**
 * An embedded Postgres and a Temporal on free ports: the dev server (in memory, no UI), or Temporal server
 * on a database `temporal` of that Postgres (LLMGW_TEST_TEMPORAL=server).
 */
export async function startServices(log: (line: string) => void = () => {}): Promise<Services> {
  const kind = testTemporal();
  const dir = mkdtempSync(join(tmpdir(), 'llmgw-test-pg-'));
  // A first run builds the CLI or the server for minutes: its progress shows.
  const progress = (line: string) => console.error(line);
  const postgres = startEmbeddedPostgres({ dir, port: await freePort(), persistent: false, log });
  const [pg, temporal] =
    kind === 'dev'
      ? await Promise.all([
          postgres,
          findTemporalCli(progress).then(async (cli) =>
            startTemporalDevServer({ cli, port: await freePort(), log }),
          ),
        ])
      : await Promise.all([postgres, buildTemporalServer(progress)]).then(
          async ([pg]) => [pg, await temporalServerOn(pg, log)] as const,
        );
  return {
    databaseUrl: pg.url,
    temporalAddress: temporal.address,
    stop: async () => {
      await Promise.allSettled([temporal.stop(), pg.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function temporalServerOn(
  pg: EmbeddedStore,
  log: (line: string) => void,
  authorization?: TemporalAuthorization,
) {
  try {
    return await startTemporalPostgresServer({
      postgresUrl: temporalDatabaseUrl(pg.url),
      port: await freePortBlock(authorization ? AUTHORIZING_SERVER_PORTS : TEMPORAL_SERVER_PORTS),
      authorization,
      log,
    });
  } catch (error) {
    await pg.stop();
    throw error;
  }
}

/**
 * Postgres and Temporal server with llmgw's authorizer (temporal-server.sh start --authorize) and the key
 * it shares with the control plane, in a file: for the tests of agents' Temporal credentials alone,
 * since the build and the start cost minutes that the other tests need not pay.
 */
export async function startAuthorizingServices(
  log: (line: string) => void = () => {},
): Promise<Services & { keyFile: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'llmgw-test-authz-'));
  const keyFile = join(dir, 'temporal.key');
  writeFileSync(keyFile, newSecret(), { mode: 0o600 });
  const authorization = { keyFile, key: readFileSync(keyFile) };
  const [pg] = await Promise.all([
    startEmbeddedPostgres({ dir: join(dir, 'pg'), port: await freePort(), persistent: false, log }),
    buildTemporalServer((line) => console.error(line), { authorize: true }),
  ]);
  const temporal = await temporalServerOn(pg, log, authorization);
  return {
    databaseUrl: pg.url,
    temporalAddress: temporal.address,
    keyFile,
    stop: async () => {
      await Promise.allSettled([temporal.stop(), pg.stop()]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

let own: Promise<Services> | null = null;

/**
 * The services of this test run: those `npm test` started (in the environment), else — when a test
 * file runs alone — ones started for this process and stopped when it ends.
 */
export function sharedServices(): Promise<Services> {
  if (process.env[SERVICE_ENV.none]) {
    return Promise.reject(
      new Error('this test needs Postgres and Temporal: it belongs in test/integration, not test/unit'),
    );
  }
  const databaseUrl = process.env[SERVICE_ENV.database];
  const temporalAddress = process.env[SERVICE_ENV.temporal];
  if (databaseUrl && temporalAddress)
    return Promise.resolve({ databaseUrl, temporalAddress, stop: async () => {} });
  own ??= startServices();
  return own;
}

/** Stops services this process started itself (a test file run alone). */
export async function stopOwnServices() {
  if (own) await (await own).stop();
  own = null;
}
