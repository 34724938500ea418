import { ConfigError } from '../config.ts';
import { hashSecret, newSecret, sameHash } from '../contracts/secrets.ts';
import type { Sql } from '../store/db.ts';
import { hasLiveAdmin, type TokenGrant, tokensByHashPrefix } from '../store/tokens.ts';
import { issueToken } from './issue.ts';

const admin = (name: string) => ({
  name,
  role: 'admin' as const,
  scope: null,
  models: null,
  expires_at: null,
});

/**
 * LLMGW_ADMIN_TOKEN: its secret is the admin token named `bootstrap`, stored at each start of the API
 * (dev and serve), so that an installation's first admin comes from its environment. A start with the
 * same secret changes (and records) nothing.
 */
export function storeBootstrapAdmin(sql: Sql, secret: string): Promise<void> {
  return storeFromEnvironment(sql, admin('bootstrap'), secret, 'LLMGW_ADMIN_TOKEN');
}

/**
 * LLMGW_METRICS_TOKEN: its secret is the metrics token named `metrics` (GET /metrics only), stored at
 * each start of the API like the bootstrap admin, so that Prometheus can be given the same secret.
 */
export function storeMetricsToken(sql: Sql, secret: string): Promise<void> {
  const grant = { name: 'metrics', role: 'metrics' as const, scope: null, models: null, expires_at: null };
  return storeFromEnvironment(sql, grant, secret, 'LLMGW_METRICS_TOKEN');
}

/** Stores a token whose secret an environment variable gives, unless it is stored already as it is. */
async function storeFromEnvironment(sql: Sql, grant: TokenGrant, secret: string, variable: string) {
  const hash = hashSecret(secret);
  const stored = (await tokensByHashPrefix(sql, hash)).find(
    (t) => t.name === grant.name && sameHash(t.secret_sha256, hash),
  );
  if (stored?.role === grant.role && stored.scope === null && stored.expires_at === null) return;
  await issueToken(sql, grant, secret, variable, { replace: true });
}

/**
 * `llmgw serve` without LLMGW_ADMIN_TOKEN while no admin token works would answer every call 401 with no
 * way in: it stops instead. Once an admin token exists (one made through the API), it starts without.
 */
export async function refuseWithoutAdmin(sql: Sql, adminToken: string | undefined): Promise<void> {
  if (adminToken || (await hasLiveAdmin(sql))) return;
  throw new ConfigError(
    'LLMGW_ADMIN_TOKEN is not set and the store holds no admin token, so no one could call the API; set it to a secret (openssl rand -base64 32) and start again',
  );
}

/**
 * `llmgw dev`'s first start: when no admin token lets anyone in, an admin token named `admin`, whose
 * secret is returned to be shown once; null when there is one already.
 */
export async function createFirstAdmin(sql: Sql): Promise<string | null> {
  if (await hasLiveAdmin(sql)) return null;
  const secret = newSecret();
  await issueToken(sql, admin('admin'), secret, 'llmgw dev');
  return secret;
}

/**
 * The demo's own admin token (`demo`, so its changes read `updated_by: demo`), with a new secret at each
 * start: the demo runs in this process and needs no secret kept anywhere else.
 */
export async function issueDemoToken(sql: Sql): Promise<string> {
  const secret = newSecret();
  await issueToken(sql, admin('demo'), secret, 'llmgw dev --demo', { replace: true });
  return secret;
}
