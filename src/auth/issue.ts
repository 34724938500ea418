import { hashSecret } from '../contracts/secrets.ts';
import { audited } from '../store/audit.ts';
import type { Db } from '../store/db.ts';
import { getToken, putToken, type TokenGrant } from '../store/tokens.ts';

/**
 * Stores a token for `secret` and records it in the audit log: its grant, never the secret or its hash.
 * `replace` gives an existing token of that name this grant and secret; otherwise the name must be free.
 */
export function issueToken(
  db: Db,
  grant: TokenGrant,
  secret: string,
  actor: string,
  options: { replace?: boolean } = {},
): Promise<void> {
  return audited(
    db,
    { actor, action: options.replace ? 'token.replace' : 'token.create', target: `token:${grant.name}` },
    (tx) => getToken(tx, grant.name),
    (tx) => putToken(tx, grant, hashSecret(secret), actor, options),
  );
}
