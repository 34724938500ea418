import { Client, Connection } from '@temporalio/client';
import { runGateway } from '../../src/cli/gateway.ts';
import { startApi } from '../../src/cli/serve.ts';
import { startWorker } from '../../src/cli/worker.ts';
import { type Config, readConfig } from '../../src/config.ts';
import { newSecret } from '../../src/contracts/secrets.ts';
import { temporalAuth } from '../../src/contracts/temporal-credentials.ts';
import type { ClusterNode } from '../../src/domain/cluster.ts';
import type { Reconcilers } from '../../src/reconcilers/client.ts';
import { MIN_SIGNAL_GAP_MS } from '../../src/reconcilers/load-signals.ts';
import { connect, type Sql } from '../../src/store/db.ts';
import { newId } from '../../src/store/ids.ts';
import { migrate } from '../../src/store/migrate.ts';
import { putNode } from '../../src/store/nodes.ts';
import { reconcilerId } from '../../src/workflows/messages.ts';
import { type Services, sharedServices, stopOwnServices } from './services.ts';

export interface Answer<T = any> {
  status: number;
  body: T;
}

export interface Stack {
  url: string;
  sql: Sql;
  config: Config;
  temporal: Client;
  temporalAddress: string;
  /** The secret of the stack's admin token (LLMGW_ADMIN_TOKEN, stored as `bootstrap`). */
  adminToken: string;
  /** The secret of the stack's metrics token (LLMGW_METRICS_TOKEN, stored as `metrics`). */
  metricsToken: string;
  /** GET /metrics with the metrics token, as Prometheus scrapes it: the text, or an error if refused. */
  scrape(): Promise<string>;
  /**
   * Calls the API with the admin token, unless `headers.authorization` says otherwise (undefined: none).
   */
  call<T = any>(
    method: string,
    path: string,
    body?: unknown,
    headers?: Record<string, string | undefined>,
  ): Promise<Answer<T>>;
  /** Makes a token through the API (as admin) and returns its secret. */
  token(grant: {
    name: string;
    role: string;
    scope?: string;
    models?: string[];
    node?: string;
    node_address?: string;
    node_bounds?: unknown;
    expires_at?: string;
  }): Promise<string>;
  /** The gateway's base URL (the OpenAI API is under `${gatewayUrl}/v1`), when the stack runs one. */
  gatewayUrl?: string;
  /** The stack's database, for a process of its own (`llmgw gateway`) to read. */
  databaseUrl: string;
  /** Starts (again) the worker: reconcilers, activities and the simulated cluster. */
  startWorker(): Promise<void>;
  stopWorker(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A fresh database, its own task queue, the API on a free port and (optionally) a worker; an admin
 * token that `call` sends by default.
 */
export async function startStack(
  options: {
    env?: Record<string, string>;
    nodes?: Omit<ClusterNode, 'state'>[];
    worker?: boolean;
    /** Runs the OpenAI-compatible gateway too, on a free port. */
    gateway?: boolean;
    /** A Postgres of the test's own (fault tests stop it); else a fresh database in the shared one. */
    databaseUrl?: string;
    /** Services of the test's own (it stops them), instead of the shared ones. */
    services?: Services;
  } = {},
): Promise<Stack> {
  const services = options.services ?? (await sharedServices());
  const database = `t_${newId()}`;
  const databaseUrl = options.databaseUrl ?? (await createDatabase(services.databaseUrl, database));
  const sql = connect(databaseUrl);
  await migrate(sql);
  for (const node of options.nodes ?? []) await putNode(sql, node);

  const adminToken = newSecret();
  const metricsToken = newSecret();
  const config: Config = {
    ...readConfig({
      LLMGW_ADMIN_TOKEN: adminToken,
      LLMGW_METRICS_TOKEN: metricsToken,
      // Tests compare /metrics with what they just changed: every scrape reads the store.
      LLMGW_METRICS_REFRESH_S: '0',
      LLMGW_RESYNC_S: '2',
      LLMGW_SIM_START_DELAY_MS: '200',
      LLMGW_DRAIN_GRACE_S: '0.2',
      // Tests send many refused requests from one address; auth-throttle.test.ts sets a burst of its own.
      LLMGW_AUTH_FAILURE_BURST: '1000000',
      ...options.env,
    }),
    taskQueue: `llmgw-test-${database}`,
  };
  const api = await startApi({ config, sql, temporalAddress: services.temporalAddress, port: 0, log: quiet });
  const connection = await Connection.connect({
    address: services.temporalAddress,
    ...temporalAuth(config.temporalKey),
  });
  const temporal = new Client({ connection, namespace: config.temporalNamespace });
  let worker: Awaited<ReturnType<typeof startWorker>> | null = null;
  const gateway = options.gateway
    ? await runGateway({ config, sql, temporalAddress: services.temporalAddress, port: 0, log: quiet })
    : undefined;

  /**
   * Reconciler IDs (reconcile:<model>) are shared by every stack on this Temporal server: ours are ended,
   * or a later stack's model of the same name would signal ours, on a task queue no worker polls (a CI
   * run's reconciler-start test waited 80 s for a pass so). Those visibility lists on our task queue, and
   * those of our models it does not list, read by ID: Temporal's visibility is eventually consistent, so a
   * reconciler started just before may not be listed yet (not seen here; the leak seen was a start after).
   */
  async function endReconcilers() {
    const listed = new Set<string>();
    const running = temporal.workflow.list({
      query: `TaskQueue = "${config.taskQueue}" AND ExecutionStatus = "Running"`,
    });
    for await (const workflow of running) listed.add(workflow.workflowId);
    const models = await sql<{ name: string }[]>`select name from models`.catch(() => []);
    for (const id of models.map(({ name }) => reconcilerId(name)).filter((id) => !listed.has(id))) {
      const described = await temporal.workflow
        .getHandle(id)
        .describe()
        .catch(() => undefined);
      if (described?.status.name === 'RUNNING' && described.taskQueue === config.taskQueue) listed.add(id);
    }
    for (const id of listed) {
      await temporal.workflow
        .getHandle(id)
        .terminate('test stack stopped')
        .catch(() => {});
    }
  }

  const stack: Stack = {
    url: api.url,
    gatewayUrl: gateway?.url,
    databaseUrl,
    sql,
    config,
    temporal,
    temporalAddress: services.temporalAddress,
    adminToken,
    metricsToken,
    async scrape() {
      const response = await fetch(`${api.url}/metrics`, {
        headers: { authorization: `Bearer ${metricsToken}` },
      });
      const text = await response.text();
      if (response.status !== 200) throw new Error(`GET /metrics -> ${response.status} ${text}`);
      return text;
    },
    async call(method, path, body, headers = {}) {
      const given = {
        authorization: `Bearer ${adminToken}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      };
      const sent = Object.fromEntries(
        Object.entries(given).filter((entry): entry is [string, string] => entry[1] !== undefined),
      );
      const response = await fetch(`${api.url}${path}`, {
        method,
        headers: sent,
        body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
      });
      const text = await response.text();
      let parsed: unknown = text;
      try {
        parsed = JSON.parse(text);
      } catch {}
      return { status: response.status, body: parsed as never };
    },
    async token(grant) {
      const answer = await stack.call('POST', '/api/v1/tokens', grant);
      if (answer.status !== 201) throw new Error(`token ${grant.name}: ${JSON.stringify(answer.body)}`);
      return answer.body.token;
    },
    async startWorker() {
      worker ??= await startWorker({ config, sql, temporalAddress: services.temporalAddress, log: quiet });
    },
    async stopWorker() {
      await worker?.stop();
      worker = null;
    },
    async stop() {
      await stack.stopWorker();
      // What could start a reconciler again (the gateway's load reports, the API's) stops before they
      // are ended, and a load signal held back by its pacer (reconcilers/load-signals.ts) fires first:
      // one started after the sweep would outlive the stack (a CI run found one, 4 ms after it).
      await gateway?.stop();
      await api.stop();
      await new Promise((resolve) => setTimeout(resolve, MIN_SIGNAL_GAP_MS + 50));
      await endReconcilers();
      await connection.close();
      await sql.end({ timeout: 5 });
      // Services this process started stop with the stack; a later stack in the process starts new ones.
      if (!options.services) await stopOwnServices();
    },
  };
  if (options.worker) await stack.startWorker();
  return stack;
}

const quiet = { info() {}, warn() {}, error: console.error };

/** Reconcilers that are never told anything and all run: for an app or a driver tested without Temporal. */
export const idleReconcilers: Reconcilers = {
  tell: async () => {},
  ensure: async () => [],
  missing: async () => [],
};

/** A fresh, migrated database in the shared Postgres, for tests of the store alone. */
export async function freshStore(): Promise<Sql> {
  const services = await sharedServices();
  const sql = connect(await createDatabase(services.databaseUrl, `t_${newId()}`));
  await migrate(sql);
  return sql;
}

/** Creates a database next to the one `adminUrl` names and returns its URL. */
/** A new, empty database `database` beside the one of `adminUrl`, and its URL. */
export async function createDatabase(adminUrl: string, database: string): Promise<string> {
  const admin = connect(adminUrl, { max: 1 });
  await admin.unsafe(`create database ${database}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

/** Polls `check` until it returns a value that is not undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${withCauses(last)}` : ''}`);
}

/** An error and the errors it wraps: a client's ServiceError says what failed only in its cause. */
function withCauses(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause === undefined ? String(error) : `${String(error)} (cause: ${withCauses(cause)})`;
}
