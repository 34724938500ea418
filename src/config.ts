import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import {
  estimatedBits,
  guessesLog10,
  STRONG_SECRET_BITS,
  STRONG_SECRET_GUESSES_LOG10,
} from './contracts/secrets.ts';
import { MIN_TEMPORAL_KEY_BYTES } from './contracts/temporal-credentials.ts';
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

function number(env: NodeJS.ProcessEnv, name: string, fallback: number, { integer = false, min = 0 } = {}) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < min || (integer && !Number.isInteger(value))) {
    throw new ConfigError(`${name}=${raw} is not ${integer ? 'a whole number' : 'a number'} >= ${min}`);
  }
  return value;
}

const port = (env: NodeJS.ProcessEnv, name: string, fallback: number) =>
  number(env, name, fallback, { integer: true, min: 1 });

/** A setting that is on or off: 1 or 0 (unset or empty: off). */
function flag(env: NodeJS.ProcessEnv, name: string): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '' || raw === '0') return false;
  if (raw === '1') return true;
  throw new ConfigError(`${name}=${raw} must be 1 (on) or 0 (off)`);
}

/** An http(s) URL without its trailing slash; it ends up in the console's links, so nothing else is taken. */
function httpUrl(env: NodeJS.ProcessEnv, name: string, fallback: string): string {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^https?:\/\/[^\s"'<>]+$/.test(raw) || !URL.canParse(raw)) {
    throw new ConfigError(`${name}=${raw} is not an http:// or https:// URL`);
  }
  return raw.replace(/\/+$/, '');
}

/** A token's secret given by the environment (LLMGW_ADMIN_TOKEN, LLMGW_METRICS_TOKEN); undefined when unset. */
/** A secret from NAME or NAME_FILE (secret-file.ts), its refusals as ConfigErrors. */
function fromEnvOrFile(env: NodeJS.ProcessEnv, name: string): string | undefined {
  try {
    return secretFromEnv(env, name);
  } catch (error) {
    throw new ConfigError((error as Error).message);
  }
}

function secret(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const value = fromEnvOrFile(env, name);
  // Only its hash is kept, which protects a long random secret but not a short one (contracts/secrets.ts);
  // and it travels as a bearer token, whose characters are few (RFC 6750).
  if (value && !/^[\w\-.~+/]{32,512}=*$/.test(value)) {
    throw new ConfigError(
      `${name} must be 32 to 512 letters, digits or "-._~+/"; make one with: openssl rand -base64 32`,
    );
  }
  const bits = value ? estimatedBits(value) : STRONG_SECRET_BITS;
  if (bits < STRONG_SECRET_BITS) {
    throw new ConfigError(
      `${name} is too easy to guess (its characters repeat: about ${Math.floor(bits)} bits, ${STRONG_SECRET_BITS} needed); make one with: openssl rand -base64 32`,
    );
  }
  const guesses = value ? guessesLog10(value) : STRONG_SECRET_GUESSES_LOG10;
  if (guesses < STRONG_SECRET_GUESSES_LOG10) {
    throw new ConfigError(
      `${name} is too easy to guess (it follows words or patterns: about 10^${Math.floor(guesses)} guesses, 10^${STRONG_SECRET_GUESSES_LOG10} needed); make one with: openssl rand -base64 32`,
    );
  }
  return value || undefined;
}

/** A key kept in a file (its surrounding blanks dropped), at least MIN_TEMPORAL_KEY_BYTES; undefined when unset. */
function keyFile(env: NodeJS.ProcessEnv, name: string): Buffer | undefined {
  const path = env[name];
  if (!path) return undefined;
  let key: Buffer;
  try {
    key = Buffer.from(readFileSync(path, 'utf8').trim());
  } catch (error) {
    throw new ConfigError(
      `${name}=${path} cannot be read: ${(error as NodeJS.ErrnoException).code ?? error}`,
    );
  }
  if (key.length < MIN_TEMPORAL_KEY_BYTES) {
    throw new ConfigError(
      `${name}=${path} holds ${key.length} bytes, fewer than ${MIN_TEMPORAL_KEY_BYTES}; make one with: openssl rand -base64 32`,
    );
  }
  return key;
}

/** A load source name part: letters, digits, ".", "_" or "-" (the API's LoadReport source rule). */
function gatewayInstance(value: string | undefined): string {
  const instance = value || `${hostname()}-${process.pid}`.replace(/[^\w.-]/g, '-').slice(0, 80);
  if (!/^[A-Za-z0-9][\w.-]{0,79}$/.test(instance)) {
    throw new ConfigError(
      `LLMGW_GATEWAY_INSTANCE=${value} must be 1 to 80 letters, digits, ".", "_" or "-", starting with a letter or digit`,
    );
  }
  return instance;
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const metricsPort = env.LLMGW_METRICS_PORT ? port(env, 'LLMGW_METRICS_PORT', 0) : undefined;
  const adminToken = secret(env, 'LLMGW_ADMIN_TOKEN');
  const metricsToken = secret(env, 'LLMGW_METRICS_TOKEN');
  // One secret for two tokens would make the admin's the one that Prometheus keeps in a file.
  if (metricsToken && metricsToken === adminToken) {
    throw new ConfigError('LLMGW_METRICS_TOKEN must differ from LLMGW_ADMIN_TOKEN');
  }
  const temporalUiPort = port(env, 'LLMGW_TEMPORAL_UI_PORT', 8233);
  return {
    databaseUrl: fromEnvOrFile(env, 'DATABASE_URL'),
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    temporalKey: keyFile(env, 'LLMGW_TEMPORAL_KEY_FILE'),
    temporalPort: port(env, 'LLMGW_TEMPORAL_PORT', 7233),
    temporalUiPort,
    temporalUiUrl: httpUrl(env, 'LLMGW_TEMPORAL_UI_URL', `http://localhost:${temporalUiPort}`),
    trustProxy: flag(env, 'LLMGW_TRUST_PROXY'),
    authFailureBurst: number(env, 'LLMGW_AUTH_FAILURE_BURST', DEFAULT_AUTH_FAILURE_BURST, {
      integer: true,
      min: 1,
    }),
    postgresPort: port(env, 'LLMGW_POSTGRES_PORT', 5433),
    port: port(env, 'PORT', 8080),
    host: env.LLMGW_HOST || '127.0.0.1',
    home: resolve(env.LLMGW_HOME || '.llmgw'),
    simClusterFile: env.LLMGW_SIM_CLUSTER === undefined ? undefined : resolve(env.LLMGW_SIM_CLUSTER),
    resyncMs: number(env, 'LLMGW_RESYNC_S', 30, { min: 0.1 }) * 1000,
    simStartDelayMs: number(env, 'LLMGW_SIM_START_DELAY_MS', 2000),
    drainGraceMs: number(env, 'LLMGW_DRAIN_GRACE_S', 30) * 1000,
    nodeLostMs: number(env, 'LLMGW_NODE_LOST_S', 30, { min: 1 }) * 1000,
    adminToken,
    metricsToken,
    metricsRefreshMs: number(env, 'LLMGW_METRICS_REFRESH_S', 5) * 1000,
    reconcilerCheckMs: number(env, 'LLMGW_RECONCILER_CHECK_S', 60, { min: 0.1 }) * 1000,
    workflowCache: number(env, 'LLMGW_WORKFLOW_CACHE', 1000, { integer: true, min: 2 }),
    scopeCaps: {
      models: number(env, 'LLMGW_MAX_MODELS_PER_SCOPE', DEFAULT_SCOPE_CAPS.models, { integer: true, min: 1 }),
      scopes: number(env, 'LLMGW_MAX_PROJECTS_PER_SCOPE', DEFAULT_SCOPE_CAPS.scopes, {
        integer: true,
        min: 1,
      }),
    },
    metricsPort,
    gateway: {
      port: port(env, 'LLMGW_GATEWAY_PORT', 8000),
      queueMs: number(env, 'LLMGW_GATEWAY_QUEUE_S', 120) * 1000,
      queueMax: number(env, 'LLMGW_GATEWAY_QUEUE_MAX', 1000, { integer: true, min: 1 }),
      instance: gatewayInstance(env.LLMGW_GATEWAY_INSTANCE),
    },
    taskQueue: env.LLMGW_TASK_QUEUE || 'llmgw-reconciler',
    policy: {
      ...DEFAULT_POLICY_SETTINGS,
      scaleDownWindowMs: number(env, 'LLMGW_SCALE_DOWN_WINDOW_S', 120) * 1000,
      loadStaleMs: number(env, 'LLMGW_LOAD_STALE_S', 60, { min: 0.1 }) * 1000,
      loadSourcesMax: number(env, 'LLMGW_LOAD_SOURCES_MAX', 64, { integer: true, min: 1 }),
    },
  };
}
