import { resolve } from 'node:path';
import { DEFAULT_POLICY_SETTINGS, type PolicySettings } from './domain/snapshot.ts';

/** Everything llmgw reads from its environment; names as ARCHITECTURE.md lists them. */
export interface Config {
  /** Postgres; absent = an embedded Postgres under `home` (llmgw dev only). */
  databaseUrl?: string;
  /** Temporal frontend; absent = the Temporal CLI dev server (llmgw dev only). */
  temporalAddress?: string;
  temporalNamespace: string;
  temporalPort: number;
  temporalUiPort: number;
  /** Embedded Postgres port (llmgw dev only). */
  postgresPort: number;
  port: number;
  host: string;
  home: string;
  simClusterFile?: string;
  resyncMs: number;
  simStartDelayMs: number;
  drainGraceMs: number;
  adminToken?: string;
  metricsPort?: number;
  taskQueue: string;
  policy: PolicySettings;
}

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

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const metricsPort = env.LLMGW_METRICS_PORT ? port(env, 'LLMGW_METRICS_PORT', 0) : undefined;
  // Only its hash is kept, which protects a long random secret but not a short one (api/auth/secrets.ts);
  // and it travels as a bearer token, whose characters are few (RFC 6750).
  if (env.LLMGW_ADMIN_TOKEN && !/^[\w\-.~+/]{32,512}=*$/.test(env.LLMGW_ADMIN_TOKEN)) {
    throw new ConfigError(
      'LLMGW_ADMIN_TOKEN must be 32 to 512 letters, digits or "-._~+/"; make one with: openssl rand -base64 32',
    );
  }
  return {
    databaseUrl: env.DATABASE_URL || undefined,
    temporalAddress: env.TEMPORAL_ADDRESS || undefined,
    temporalNamespace: env.TEMPORAL_NAMESPACE || 'default',
    temporalPort: port(env, 'LLMGW_TEMPORAL_PORT', 7233),
    temporalUiPort: port(env, 'LLMGW_TEMPORAL_UI_PORT', 8233),
    postgresPort: port(env, 'LLMGW_POSTGRES_PORT', 5433),
    port: port(env, 'PORT', 8080),
    host: env.LLMGW_HOST || '127.0.0.1',
    home: resolve(env.LLMGW_HOME || '.llmgw'),
    simClusterFile: env.LLMGW_SIM_CLUSTER === undefined ? undefined : resolve(env.LLMGW_SIM_CLUSTER),
    resyncMs: number(env, 'LLMGW_RESYNC_S', 30, { min: 0.1 }) * 1000,
    simStartDelayMs: number(env, 'LLMGW_SIM_START_DELAY_MS', 2000),
    drainGraceMs: number(env, 'LLMGW_DRAIN_GRACE_S', 30) * 1000,
    adminToken: env.LLMGW_ADMIN_TOKEN || undefined,
    metricsPort,
    taskQueue: env.LLMGW_TASK_QUEUE || 'llmgw-reconciler',
    policy: {
      ...DEFAULT_POLICY_SETTINGS,
      scaleDownWindowMs: number(env, 'LLMGW_SCALE_DOWN_WINDOW_S', 120) * 1000,
      loadStaleMs: number(env, 'LLMGW_LOAD_STALE_S', 60, { min: 0.1 }) * 1000,
    },
  };
}
