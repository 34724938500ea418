import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { childEnvironment, startService } from '../../child-process.ts';
import { temporalAuth } from '../../contracts/temporal-credentials.ts';
import { lackedSearchAttributes, registration } from '../../reconcilers/search-attribute-check.ts';
import { LlmgwModel } from '../../workflows/search-attributes.ts';
import { INSTALLER_VARIABLES, runInstallScript, scriptPath } from './install-script.ts';
import { waitUntilServing } from './temporal-server.ts';

/** The ports the server takes from its first on (scripts/temporal-server.sh says which is which). */
export const TEMPORAL_SERVER_PORTS = 9;
/** With llmgw's authorizer: three more, the internal frontend's. */
export const AUTHORIZING_SERVER_PORTS = 12;

/** llmgw's authorizer on (deploy/temporal-server): the file of the key it shares with the control plane, and that key. */
export interface TemporalAuthorization {
  keyFile: string;
  key: Buffer;
}

/** How long workflow histories stay once closed: what compose's temporal-setup gives its namespace. */
const RETENTION = '72h';
const ALREADY_EXISTS = 6;

export interface TemporalPostgresServer {
  address: string;
  stop(): Promise<void>;
}

/**
 * Builds Temporal server and its SQL tool once per machine (scripts/temporal-server.sh build; minutes the
 * first time, its progress to `log` every 10 s) and returns the folder they are cached in.
 */
export function buildTemporalServer(
  log: (line: string) => void = () => {},
  { authorize = false } = {},
): Promise<string> {
  return runInstallScript('temporal-server.sh', authorize ? ['build', '--authorize'] : ['build'], log);
}

/** Temporal's database beside llmgw's: the same server and role, the database `temporal`. */
export function temporalDatabaseUrl(databaseUrl: string): string {
  const url = new URL(databaseUrl);
  url.pathname = '/temporal';
  return url.toString();
}

/**
 * Runs Temporal server on the Postgres database of `postgresUrl` (and `<database>_visibility`), on the
 * ports `port`..`port + TEMPORAL_SERVER_PORTS - 1`: the script brings both schemas up to date, then the
 * server starts. Once it answers, creates `namespace` and llmgw's search attributes where missing, as
 * compose's temporal-setup job does. Build it first (buildTemporalServer). With `authorization`, llmgw's
 * server, on AUTHORIZING_SERVER_PORTS ports: every call then needs a credential signed with its key.
 */
export async function startTemporalPostgresServer(options: {
  postgresUrl: string;
  port: number;
  namespace?: string;
  authorization?: TemporalAuthorization;
  log?: (line: string) => void;
}): Promise<TemporalPostgresServer> {
  const { authorization } = options;
  const server = startService(
    'bash',
    [
      scriptPath('temporal-server.sh'),
      'start',
      '--port',
      String(options.port),
      ...(authorization ? ['--authorize'] : []),
    ],
    {
      stopSignal: 'SIGTERM',
      log: options.log,
      // The URL holds the password: in the environment, not on a command line any local user can read.
      env: childEnvironment({
        passes: INSTALLER_VARIABLES,
        set: {
          TEMPORAL_POSTGRES_URL: options.postgresUrl,
          ...(authorization && { LLMGW_TEMPORAL_KEY_FILE: authorization.keyFile }),
        },
      }),
    },
  );
  const address = `127.0.0.1:${options.port}`;
  try {
    // A first start on an empty database applies every schema version first.
    await waitUntilServing({ address, what: 'Temporal server', timeoutMs: 120_000, ...server });
    await prepareNamespace(address, options.namespace ?? 'default', authorization?.key);
  } catch (error) {
    server.child.kill('SIGKILL');
    throw error;
  }
  return { address, stop: server.stop };
}

/** Creates the namespace and llmgw's search attributes where missing, and waits until queries take them. */
async function prepareNamespace(address: string, namespace: string, key: Buffer | undefined) {
  const connection = await Connection.connect({ address, ...temporalAuth(key) });
  try {
    await connection.workflowService
      .registerNamespace({ namespace, workflowExecutionRetentionPeriod: msToTs(RETENTION) })
      .catch((error) => {
        if ((error as { code?: number }).code !== ALREADY_EXISTS) throw error;
      });
    const missing = await lackedSearchAttributes(connection.operatorService, namespace);
    if (missing.length)
      await connection.operatorService.addSearchAttributes(registration(namespace, missing));
    await untilQueryable(connection, namespace);
  } finally {
    await connection.close();
  }
}

/**
 * Waits until the frontend's cache of namespaces has the namespace with its search attributes: a query on
 * one of them is refused before. The other services refresh theirs within the same second (the script's
 * dynamic config).
 */
async function untilQueryable(connection: Connection, namespace: string) {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await connection.workflowService.countWorkflowExecutions({
        namespace,
        query: `${LlmgwModel.name} = ''`,
      });
      return;
    } catch (error) {
      if (Date.now() > deadline) {
        throw new Error(
          `Temporal namespace ${namespace} was not usable 30 s after its creation: ${String(error)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
