import { createHmac } from 'node:crypto';

/**
 * The bearer credentials Temporal server's llmgw authorizer takes (deploy/temporal-server): HS256 JWTs
 * signed with the key the control plane and that server share (LLMGW_TEMPORAL_KEY_FILE). The control
 * plane's reaches every API; a node's, only its node's task queue in one namespace, until it expires.
 */

/** How long a node's credential lasts: its agent gets a fresh one with every heartbeat. */
export const NODE_CREDENTIAL_TTL_MS = 10 * 60_000;

/** The smallest key taken: HS256's own block of 256 bits. */
export const MIN_TEMPORAL_KEY_BYTES = 32;

const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

function signed(claims: object, key: Buffer): string {
  const unsigned = `${part({ alg: 'HS256', typ: 'JWT' })}.${part(claims)}`;
  return `${unsigned}.${createHmac('sha256', key).update(unsigned).digest('base64url')}`;
}

export const controlPlaneCredential = (key: Buffer) => signed({ sub: 'control-plane' }, key);

export function nodeCredential(key: Buffer, node: string, namespace: string, nowMs: number) {
  const expiresAtMs = nowMs + NODE_CREDENTIAL_TTL_MS;
  const credential = signed({ sub: `node:${node}`, ns: namespace, exp: Math.floor(expiresAtMs / 1000) }, key);
  return { credential, expires_at: new Date(expiresAtMs).toISOString() };
}

/**
 * What a connection to Temporal takes besides its address: the control plane's credential when a key is
 * configured (then in plain gRPC, as without one: the SDK would otherwise turn TLS on), nothing without.
 */
export const temporalAuth = (key: Buffer | undefined) =>
  key ? { apiKey: controlPlaneCredential(key), tls: false as const } : {};
