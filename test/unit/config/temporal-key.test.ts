// LLMGW_TEMPORAL_KEY_FILE and the Temporal credentials signed with its key (src/contracts/temporal-credentials.ts):
// a key too short or a file unreadable is refused at start in one sentence; a credential is an HS256 JWT
// that only that key verifies, a node's naming its node and namespace and expiring 10 minutes on.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, readConfig } from '../../../src/config.ts';
import { newSecret } from '../../../src/contracts/secrets.ts';
import {
  controlPlaneCredential,
  NODE_CREDENTIAL_TTL_MS,
  nodeCredential,
  temporalAuth,
} from '../../../src/contracts/temporal-credentials.ts';

const dir = mkdtempSync(join(tmpdir(), 'llmgw-temporal-key-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** The claims of a JWT whose signature `key` verifies, or null. */
function verified(jwt: string, key: Buffer) {
  const [head, body, signature] = jwt.split('.');
  const expected = createHmac('sha256', key).update(`${head}.${body}`).digest('base64url');
  if (signature !== expected) return null;
  assert.deepEqual(JSON.parse(Buffer.from(head, 'base64url').toString()), { alg: 'HS256', typ: 'JWT' });
  return JSON.parse(Buffer.from(body, 'base64url').toString());
}

describe('LLMGW_TEMPORAL_KEY_FILE', () => {
  it('reads the key, without the blanks around it', () => {
    const secret = newSecret();
    const file = join(dir, 'good');
    writeFileSync(file, `${secret}\n`);
    assert.equal(readConfig({ LLMGW_TEMPORAL_KEY_FILE: file }).temporalKey?.toString(), secret);
    assert.equal(readConfig({}).temporalKey, undefined);
  });

  it('refuses a key under 32 bytes and a file it cannot read, in one sentence', () => {
    const short = join(dir, 'short');
    writeFileSync(short, 'too short');
    const refusal = (file: string) => {
      try {
        readConfig({ LLMGW_TEMPORAL_KEY_FILE: file });
      } catch (error) {
        assert.ok(error instanceof ConfigError);
        return error.message;
      }
      return 'taken';
    };
    assert.equal(
      refusal(short),
      `LLMGW_TEMPORAL_KEY_FILE=${short} holds 9 bytes, fewer than 32; make one with: openssl rand -base64 32`,
    );
    assert.equal(
      refusal(join(dir, 'none')),
      `LLMGW_TEMPORAL_KEY_FILE=${join(dir, 'none')} cannot be read: ENOENT`,
    );
  });
});

describe('Temporal credentials', () => {
  const key = Buffer.from(newSecret());
  it("the control plane's: its subject alone, verified by the key and by no other", () => {
    const credential = controlPlaneCredential(key);
    assert.deepEqual(verified(credential, key), { sub: 'control-plane' });
    assert.equal(verified(credential, Buffer.from(newSecret())), null);
  });

  it("a node's: its node and namespace, expiring 10 minutes on", () => {
    const now = Date.parse('2026-12-02T18:00:00Z');
    const { credential, expires_at } = nodeCredential(key, 'gpu-7', 'default', now);
    assert.deepEqual(verified(credential, key), {
      sub: 'node:gpu-7',
      ns: 'default',
      exp: (now + NODE_CREDENTIAL_TTL_MS) / 1000,
    });
    assert.equal(expires_at, '2026-12-02T18:10:00.000Z');
  });

  it('connections carry the control plane credential in plain gRPC with a key, and nothing without', () => {
    assert.deepEqual(temporalAuth(undefined), {});
    assert.deepEqual(temporalAuth(key), { apiKey: controlPlaneCredential(key), tls: false });
  });
});
