import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { z } from 'zod';
import {
  checkSecret,
  flag,
  gatewayInstance,
  httpUrl,
  keyFile,
  number,
  port,
  refuse,
  seconds,
  sentence,
  text,
} from './config-fields.ts';
import { type KubernetesConfig, kubernetesConfig } from './domain/kubernetes-config.ts';
import { DEFAULT_POLICY_SETTINGS, type PolicySettings } from './domain/snapshot.ts';
import { secretFromEnv } from './secret-file.ts';

/** Everything llmgw reads from its environment; names as ARCHITECTURE.md lists them. */
export interface Config {
  /** Postgres; absent = an embedded Postgres under `home` (llmgw dev only). */
  databaseUrl?: string;
  /** Temporal frontend; absent = the Temporal CLI dev server (llmgw dev only). */
  temporalAddress?: string;
  temporalNamespace: string;
  /**
   * LLMGW_TEMPORAL_KEY_FILE's key, shared with a Temporal server that authorizes calls (deploy/temporal-server):
   * the control plane's connections carry a credential signed with it, agents get their node's. Absent:
   * no credentials (the dev server, which authorizes nothing).
   */
  temporalKey?: Buffer;
  temporalPort: number;
  temporalUiPort: number;
  /** Where a browser finds the Temporal UI, which the console links each reconciler to (no trailing slash). */
  temporalUiUrl: string;
  /** A proxy in front terminates TLS: its X-Forwarded-Proto tells the console whether to set cookies Secure. */
  trustProxy: boolean;
  /** Failed authentications a source address may make at once before the API answers 429 (then 1 a second). */
  authFailureBurst: number;
  /** Embedded Postgres port (llmgw dev only). */
  postgresPort: number;
  port: number;
  host: string;
  home: string;
  simClusterFile?: string;
  resyncMs: number;
  simStartDelayMs: number;
  drainGraceMs: number;
  /** How long an agent's node may be silent before it is lost with its replicas (LLMGW_NODE_LOST_S). */
  nodeLostMs: number;
  adminToken?: string;
  /** The secret of the metrics token (GET /metrics), stored at each start of the API. */
  metricsToken?: string;
  /** How old the state figures of GET /metrics may be: one store read serves every scrape meanwhile. */
  metricsRefreshMs: number;
  /** How often the worker looks for models whose reconciler is not running, and starts them. */
  reconcilerCheckMs: number;
  /** Reconcilers a worker keeps in memory between passes (Temporal's workflow cache); the others replay. */
  workflowCache: number;
  /** The most models within an operator's scope, and scopes beneath it, it may create (admins: no cap). */
  scopeCaps: ScopeCaps;
  metricsPort?: number;
  gateway: GatewayConfig;
  taskQueue: string;
  policy: PolicySettings;
  /** The Kubernetes cluster whose nodes the worker keeps and runs pods on (LLMGW_KUBERNETES); null: none. */
  kubernetes: KubernetesConfig | null;
}

export interface GatewayConfig {
  /** The OpenAI-compatible gateway's port (vLLM's 8000 by default). */
  port: number;
  /** How long a request waits for a ready replica (a model scaling from zero) before a 503. */
  queueMs: number;
  /** The most requests a model may have waiting in one gateway; past it, 429. */
  queueMax: number;
  /** This gateway's name in its load source `gateway:<instance>`. */
  instance: string;
  /** The largest request body it forwards (413 beyond). */
  maxBodyBytes: number;
  /**
   * How long a replica may take to send its answer's first bytes before the request is tried elsewhere
   * (a hung or stopped engine); prefill of a long prompt on a busy engine is the slow case it must allow.
   */
  firstByteTimeoutMs: number;
  /** How long a whole answer may take, from arrival, before the gateway ends it (a stream that never ends). */
  requestTimeoutMs: number;
  /** Further attempts after one failed before its first byte, each on another replica. */
  retries: number;
  /** The base of the retry backoff: attempt n waits a random time up to base * 2^(n-1) (full jitter). */
  retryBackoffMs: number;
  /** Failures in a row (refused, reset, 5xx, first-byte timeout) that eject a replica. */
  ejectFailures: number;
  /** How often every replica's GET /health is probed, and how long a probe may take. */
  healthIntervalMs: number;
  healthTimeoutMs: number;
  /** Failed probes in a row that eject a replica, and passing ones in a row that take it back. */
  healthUnhealthy: number;
  healthHealthy: number;
  /**
   * A replica whose recent time to first byte is this many times its model's other replicas' (median)
   * is ejected as an outlier for a while.
   */
  latencyOutlierFactor: number;
  /** How requests pick a replica: by shared prompt prefix within a load bound, or fewest in flight. */
  routing: 'prefix' | 'least-in-flight';
  /** Processes `llmgw gateway` serves with, sharing its port (gateway/workers.ts); 1: this one. */
  workers: number;
}

export interface ScopeCaps {
  models: number;
  /** Projects beneath a team; teams and their projects beneath an org. */
  scopes: number;
}

/** LLMGW_MAX_MODELS_PER_SCOPE and LLMGW_MAX_PROJECTS_PER_SCOPE when not set. */
export const DEFAULT_SCOPE_CAPS: ScopeCaps = { models: 1000, scopes: 100 };

/** How many failed authentications a source address may make at once (LLMGW_AUTH_FAILURE_BURST). */
export const DEFAULT_AUTH_FAILURE_BURST = 20;

export class ConfigError extends Error {}

/** LLMGW_ADMIN_TOKEN and the like from NAME or NAME_FILE (secret-file.ts); its refusals whole. */
function fromEnvOrFile(env: Partial<Record<string, unknown>>, name: SecretName, ctx: z.RefinementCtx) {
  try {
    return secretFromEnv(
      { [name]: env[name] as string, [`${name}_FILE`]: env[`${name}_FILE`] as string },
      name,
    );
  } catch (error) {
    return refuse(ctx, (error as Error).message, 'whole', name);
  }
}

const secretNames = ['DATABASE_URL', 'LLMGW_ADMIN_TOKEN', 'LLMGW_METRICS_TOKEN'] as const;
type SecretName = (typeof secretNames)[number];
const secretFields = Object.fromEntries(
  secretNames.flatMap((name) => [name, `${name}_FILE`]).map((name) => [name, z.string().optional()]),
) as Record<
  (typeof secretNames)[number] | `${(typeof secretNames)[number]}_FILE`,
  z.ZodOptional<z.ZodString>
>;

/** The environment llmgw reads, checked and turned into its Config in one pass. */
const EnvSchema = z
  .object({
    ...secretFields,
    TEMPORAL_ADDRESS: text(undefined),
    TEMPORAL_NAMESPACE: text('default'),
    LLMGW_TEMPORAL_KEY_FILE: keyFile,
    LLMGW_TEMPORAL_PORT: port(7233),
    LLMGW_TEMPORAL_UI_PORT: port(8233),
    LLMGW_TEMPORAL_UI_URL: httpUrl,
    LLMGW_TRUST_PROXY: flag,
    LLMGW_AUTH_FAILURE_BURST: number(DEFAULT_AUTH_FAILURE_BURST, { integer: true, min: 1 }),
    LLMGW_POSTGRES_PORT: port(5433),
    PORT: port(8080),
    LLMGW_HOST: text('127.0.0.1'),
    LLMGW_HOME: text('.llmgw'),
    LLMGW_SIM_CLUSTER: z.string().optional(),
    LLMGW_RESYNC_S: seconds(30, 0.1),
    LLMGW_SIM_START_DELAY_MS: number(2000),
    LLMGW_DRAIN_GRACE_S: seconds(30),
    LLMGW_NODE_LOST_S: seconds(30, 1),
    LLMGW_METRICS_REFRESH_S: seconds(5),
    LLMGW_RECONCILER_CHECK_S: seconds(60, 0.1),
    LLMGW_WORKFLOW_CACHE: number(1000, { integer: true, min: 2 }),
    LLMGW_MAX_MODELS_PER_SCOPE: number(DEFAULT_SCOPE_CAPS.models, { integer: true, min: 1 }),
    LLMGW_MAX_PROJECTS_PER_SCOPE: number(DEFAULT_SCOPE_CAPS.scopes, { integer: true, min: 1 }),
    LLMGW_METRICS_PORT: port(0).transform((value) => value || undefined),
    LLMGW_GATEWAY_PORT: port(8000),
    LLMGW_GATEWAY_QUEUE_S: seconds(120),
    LLMGW_GATEWAY_QUEUE_MAX: number(1000, { integer: true, min: 1 }),
    LLMGW_GATEWAY_INSTANCE: gatewayInstance(() =>
      `${hostname()}-${process.pid}`.replace(/[^\w.-]/g, '-').slice(0, 80),
    ),
    LLMGW_GATEWAY_MAX_BODY_MIB: number(8, { min: 0.001 }).transform((mib) => mib * 1024 * 1024),
    LLMGW_GATEWAY_FIRST_BYTE_TIMEOUT_S: seconds(60, 0.01),
    LLMGW_GATEWAY_REQUEST_TIMEOUT_S: seconds(600, 0.01),
    LLMGW_GATEWAY_RETRIES: number(1, { integer: true }),
    LLMGW_GATEWAY_RETRY_BACKOFF_MS: number(25),
    LLMGW_GATEWAY_EJECT_FAILURES: number(3, { integer: true, min: 1 }),
    LLMGW_GATEWAY_HEALTH_INTERVAL_S: seconds(5, 0.05),
    LLMGW_GATEWAY_HEALTH_TIMEOUT_S: seconds(2, 0.01),
    LLMGW_GATEWAY_HEALTH_UNHEALTHY: number(2, { integer: true, min: 1 }),
    LLMGW_GATEWAY_HEALTH_HEALTHY: number(2, { integer: true, min: 1 }),
    LLMGW_GATEWAY_LATENCY_OUTLIER: number(5, { min: 1.1 }),
    LLMGW_GATEWAY_ROUTING: text('prefix').transform((value, ctx): GatewayConfig['routing'] =>
      value === 'prefix' || value === 'least-in-flight'
        ? value
        : refuse(ctx, 'must be prefix or least-in-flight'),
    ),
    LLMGW_GATEWAY_WORKERS: number(1, { integer: true, min: 1 }),
    LLMGW_TASK_QUEUE: text('llmgw-reconciler'),
    LLMGW_SCALE_DOWN_WINDOW_S: seconds(120),
    LLMGW_LOAD_STALE_S: seconds(60, 0.1),
    LLMGW_LOAD_SOURCES_MAX: number(64, { integer: true, min: 1 }),
    LLMGW_START_DELAY_S: seconds(DEFAULT_POLICY_SETTINGS.startDelayMs / 1000),
    LLMGW_BURST_MEMORY_S: seconds(DEFAULT_POLICY_SETTINGS.burstMemoryMs / 1000, 1),
    LLMGW_KUBERNETES: z.string().optional(),
    LLMGW_KUBERNETES_NAMESPACE: z.string().optional(),
    LLMGW_KUBERNETES_GPU_LABEL: z.string().optional(),
    LLMGW_KUBERNETES_IMAGES: z.string().optional(),
    LLMGW_KUBERNETES_SCRAPE_MS: z.string().optional(),
  })
  .transform((env, ctx): Config => {
    const adminToken = checkSecret(fromEnvOrFile(env, 'LLMGW_ADMIN_TOKEN', ctx), ctx, 'LLMGW_ADMIN_TOKEN');
    const metricsToken = checkSecret(
      fromEnvOrFile(env, 'LLMGW_METRICS_TOKEN', ctx),
      ctx,
      'LLMGW_METRICS_TOKEN',
    );
    // One secret for two tokens would make the admin's the one that Prometheus keeps in a file.
    if (metricsToken && metricsToken === adminToken) {
      refuse(ctx, 'must differ from LLMGW_ADMIN_TOKEN', 'named', 'LLMGW_METRICS_TOKEN');
    }
    return {
      databaseUrl: fromEnvOrFile(env, 'DATABASE_URL', ctx),
      temporalAddress: env.TEMPORAL_ADDRESS,
      temporalNamespace: env.TEMPORAL_NAMESPACE,
      temporalKey: env.LLMGW_TEMPORAL_KEY_FILE,
      temporalPort: env.LLMGW_TEMPORAL_PORT,
      temporalUiPort: env.LLMGW_TEMPORAL_UI_PORT,
      temporalUiUrl: env.LLMGW_TEMPORAL_UI_URL ?? `http://localhost:${env.LLMGW_TEMPORAL_UI_PORT}`,
      trustProxy: env.LLMGW_TRUST_PROXY,
      authFailureBurst: env.LLMGW_AUTH_FAILURE_BURST,
      postgresPort: env.LLMGW_POSTGRES_PORT,
      port: env.PORT,
      host: env.LLMGW_HOST,
      home: resolve(env.LLMGW_HOME),
      simClusterFile: env.LLMGW_SIM_CLUSTER === undefined ? undefined : resolve(env.LLMGW_SIM_CLUSTER),
      resyncMs: env.LLMGW_RESYNC_S,
      simStartDelayMs: env.LLMGW_SIM_START_DELAY_MS,
      drainGraceMs: env.LLMGW_DRAIN_GRACE_S,
      nodeLostMs: env.LLMGW_NODE_LOST_S,
      adminToken,
      metricsToken,
      metricsRefreshMs: env.LLMGW_METRICS_REFRESH_S,
      reconcilerCheckMs: env.LLMGW_RECONCILER_CHECK_S,
      workflowCache: env.LLMGW_WORKFLOW_CACHE,
      scopeCaps: { models: env.LLMGW_MAX_MODELS_PER_SCOPE, scopes: env.LLMGW_MAX_PROJECTS_PER_SCOPE },
      metricsPort: env.LLMGW_METRICS_PORT,
      gateway: {
        port: env.LLMGW_GATEWAY_PORT,
        queueMs: env.LLMGW_GATEWAY_QUEUE_S,
        queueMax: env.LLMGW_GATEWAY_QUEUE_MAX,
        instance: env.LLMGW_GATEWAY_INSTANCE,
        maxBodyBytes: env.LLMGW_GATEWAY_MAX_BODY_MIB,
        firstByteTimeoutMs: env.LLMGW_GATEWAY_FIRST_BYTE_TIMEOUT_S,
        requestTimeoutMs: env.LLMGW_GATEWAY_REQUEST_TIMEOUT_S,
        retries: env.LLMGW_GATEWAY_RETRIES,
        retryBackoffMs: env.LLMGW_GATEWAY_RETRY_BACKOFF_MS,
        ejectFailures: env.LLMGW_GATEWAY_EJECT_FAILURES,
        healthIntervalMs: env.LLMGW_GATEWAY_HEALTH_INTERVAL_S,
        healthTimeoutMs: env.LLMGW_GATEWAY_HEALTH_TIMEOUT_S,
        healthUnhealthy: env.LLMGW_GATEWAY_HEALTH_UNHEALTHY,
        healthHealthy: env.LLMGW_GATEWAY_HEALTH_HEALTHY,
        latencyOutlierFactor: env.LLMGW_GATEWAY_LATENCY_OUTLIER,
        routing: env.LLMGW_GATEWAY_ROUTING,
        workers: env.LLMGW_GATEWAY_WORKERS,
      },
      taskQueue: env.LLMGW_TASK_QUEUE,
      kubernetes: kubernetes(env, ctx),
      policy: {
        ...DEFAULT_POLICY_SETTINGS,
        scaleDownWindowMs: env.LLMGW_SCALE_DOWN_WINDOW_S,
        loadStaleMs: env.LLMGW_LOAD_STALE_S,
        loadSourcesMax: env.LLMGW_LOAD_SOURCES_MAX,
        startDelayMs: env.LLMGW_START_DELAY_S,
        burstMemoryMs: env.LLMGW_BURST_MEMORY_S,
      },
    };
  });

/** The Config of an environment; a ConfigError with one sentence for the first value it refuses. */
export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) throw new ConfigError(sentence(parsed.error.issues[0], env));
  return parsed.data;
}

/** The Kubernetes settings (domain/kubernetes-config.ts reads them), or their refusal's sentence. */
function kubernetes(
  env: Record<`LLMGW_KUBERNETES${string}`, string | undefined>,
  ctx: z.RefinementCtx,
): KubernetesConfig | null {
  try {
    return kubernetesConfig(env);
  } catch (error) {
    return refuse(ctx, (error as Error).message, 'whole', 'LLMGW_KUBERNETES');
  }
}
