import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createFirstAdmin, issueDemoToken } from '../auth/bootstrap.ts';
import { type Config, ConfigError } from '../config.ts';
import { connect } from '../store/db.ts';
import { migrate } from '../store/migrate.ts';
import { demoHints, runLoadGenerator, seedDemo } from './demo.ts';
import { startEmbeddedPostgres } from './dev/embedded-postgres.ts';
import type { DevOptions } from './dev/options.ts';
import { portInUse } from './dev/ports.ts';
import {
  buildTemporalServer,
  startTemporalPostgresServer,
  TEMPORAL_SERVER_PORTS,
  temporalDatabaseUrl,
} from './dev/temporal-postgres-server.ts';
import { findTemporalCli, startTemporalDevServer } from './dev/temporal-server.ts';
import { runGateway } from './gateway.ts';
import { startApi } from './serve.ts';
import { startWorker } from './worker.ts';

type Stop = () => Promise<void>;

/**
 * `llmgw dev`: everything on one machine in one process tree — an embedded Postgres (or DATABASE_URL),
 * the Temporal dev server with its Web UI (or, with `--temporal server`, Temporal server on that Postgres;
 * or TEMPORAL_ADDRESS), the worker with a simulated cluster, and the API. Data stays in LLMGW_HOME (the
 * server's in the Postgres), so a second start finds it again.
 */
export async function runDev(
  config: Config,
  options: Partial<DevOptions> = {},
  log: Pick<Console, 'info' | 'warn' | 'error'> = console,
): Promise<Stop> {
  const temporalKind = options.temporal ?? 'dev';
  if (temporalKind === 'server' && config.temporalAddress) {
    throw new ConfigError(
      `--temporal server starts a Temporal server, but TEMPORAL_ADDRESS (${config.temporalAddress}) names one to use: drop one of the two`,
    );
  }
  await refuseBusyPorts(config, temporalKind);
  mkdirSync(config.home, { recursive: true });
  const stops: Stop[] = [];
  const stopAll: Stop = async () => {
    for (const stop of stops.reverse())
      await stop().catch((error) => log.warn(`while stopping: ${String(error)}`));
  };
  try {
    let databaseUrl = config.databaseUrl;
    if (!databaseUrl) {
      log.info(`starting Postgres (data in ${join(config.home, 'postgres')}) ...`);
      const pg = await startEmbeddedPostgres({
        dir: join(config.home, 'postgres'),
        port: config.postgresPort,
        persistent: true,
      });
      stops.push(pg.stop);
      databaseUrl = pg.url;
    }
    const sql = connect(databaseUrl);
    stops.push(() => sql.end({ timeout: 5 }));
    const applied = await migrate(sql);
    if (applied.length) log.info(`applied migrations: ${applied.join(', ')}`);

    let temporalAddress = config.temporalAddress;
    let uiUrl: string | null = null;
    if (!temporalAddress && temporalKind === 'server') {
      await buildTemporalServer((line) => log.info(line));
      log.info(`starting Temporal server (data in Postgres, databases temporal and temporal_visibility) ...`);
      const temporal = await startTemporalPostgresServer({
        postgresUrl: temporalDatabaseUrl(databaseUrl),
        port: config.temporalPort,
        namespace: config.temporalNamespace,
      });
      stops.push(temporal.stop);
      temporalAddress = temporal.address;
    }
    if (!temporalAddress) {
      log.info('starting the Temporal dev server ...');
      const temporal = await startTemporalDevServer({
        cli: await findTemporalCli((line) => log.info(line)),
        port: config.temporalPort,
        uiPort: config.temporalUiPort,
        dbFile: join(config.home, 'temporal.db'),
        namespace: config.temporalNamespace,
      });
      stops.push(temporal.stop);
      temporalAddress = temporal.address;
      uiUrl = temporal.uiUrl;
    }

    // The worker shares this process's metrics with the API, whose /metrics serves them: no port of its own.
    const worker = await startWorker({
      config: { ...config, metricsPort: undefined },
      sql,
      temporalAddress,
      demoCluster: true,
      log,
    });
    stops.push(worker.stop);
    // The console links to the UI of the dev server started here, whatever LLMGW_TEMPORAL_UI_URL says.
    const apiConfig = uiUrl ? { ...config, temporalUiUrl: uiUrl } : config;
    const api = await startApi({ config: apiConfig, sql, temporalAddress, log });
    stops.push(api.stop);
    const gateway = await runGateway({ config, sql, temporalAddress, log });
    stops.push(gateway.stop);
    const firstAdmin = await createFirstAdmin(sql);

    if (options.demo) {
      const call = apiCaller(api.url, await issueDemoToken(sql));
      log.info(
        (await seedDemo(call))
          ? 'demo: seeded Acme, teams ml and web, models chat, code and embed'
          : 'demo: already seeded',
      );
      const stopLoad = runLoadGenerator(call, log);
      stops.push(async () => stopLoad());
      for (const line of demoHints(api.url)) log.info(line);
    }
    log.info('');
    log.info(`llmgw is up.`);
    log.info(`  API          ${api.url}   (readiness: ${api.url}/readyz)`);
    log.info(`  API docs     ${api.url}/docs`);
    log.info(
      `  Gateway      ${gateway.url}/v1   (OpenAI-compatible; a client key: llmgw ctl token create --role client)`,
    );
    log.info(`  Temporal UI  ${uiUrl ?? temporalWithoutUi(temporalKind, temporalAddress)}`);
    if (firstAdmin) {
      log.info(`  Admin token  ${firstAdmin}`);
      log.info('               (shown this once: keep it; llmgw ctl reads it from LLMGW_TOKEN)');
    }
    log.info('Ctrl-C stops everything.');
    return stopAll;
  } catch (error) {
    await stopAll();
    throw error;
  }
}

/** A JSON client of the API for the demo's seed and load generator, with the demo's admin token. */
function apiCaller(base: string, token: string) {
  return async (method: string, path: string, body?: unknown) => {
    const authorization = `Bearer ${token}`;
    const response = await fetch(`${base}${path}`, {
      method,
      headers: body === undefined ? { authorization } : { authorization, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(`${method} ${path}: ${answer.error ?? response.status}`);
    return answer;
  };
}

/** What the UI line says when there is none to show. */
function temporalWithoutUi(kind: DevOptions['temporal'], address: string) {
  return kind === 'server'
    ? `(none: Temporal server has no Web UI; its gRPC at ${address})`
    : `(your Temporal at ${address})`;
}

async function refuseBusyPorts(config: Config, temporalKind: DevOptions['temporal']) {
  const wanted: [number, string][] = [
    [config.port, 'PORT'],
    [config.gateway.port, 'LLMGW_GATEWAY_PORT'],
  ];
  if (!config.databaseUrl) wanted.push([config.postgresPort, 'LLMGW_POSTGRES_PORT']);
  if (!config.temporalAddress && temporalKind === 'server') {
    // The server takes a block of ports from LLMGW_TEMPORAL_PORT on.
    for (let offset = 0; offset < TEMPORAL_SERVER_PORTS; offset++) {
      wanted.push([config.temporalPort + offset, 'LLMGW_TEMPORAL_PORT']);
    }
  } else if (!config.temporalAddress) {
    wanted.push(
      [config.temporalPort, 'LLMGW_TEMPORAL_PORT'],
      [config.temporalUiPort, 'LLMGW_TEMPORAL_UI_PORT'],
    );
  }
  for (const [port, variable] of wanted) {
    if (await portInUse(port, config.host)) {
      throw new Error(
        `port ${port} is in use (${variable}); stop what uses it, or set ${variable} to another port`,
      );
    }
  }
}
