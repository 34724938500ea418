import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../src/cli/dev/ports.ts';
import { findTemporalCli, startTemporalDevServer } from '../../src/cli/dev/temporal-server.ts';
import { startEmbeddedPostgres } from '../../src/store/embedded.ts';

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
} as const;

/** An embedded Postgres and a Temporal dev server (in memory, no UI) on free ports. */
export async function startServices(log: (line: string) => void = () => {}): Promise<Services> {
  const dir = mkdtempSync(join(tmpdir(), 'llmgw-test-pg-'));
  const [pgPort, temporalPort] = [await freePort(), await freePort()];
  const [pg, temporal] = await Promise.all([
    startEmbeddedPostgres({ dir, port: pgPort, persistent: false, log }),
    // A first run builds the CLI for minutes: its progress shows.
    findTemporalCli((line) => console.error(line)).then((cli) =>
      startTemporalDevServer({ cli, port: temporalPort, log }),
    ),
  ]);
  return {
    databaseUrl: pg.url,
    temporalAddress: temporal.address,
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
