import { bearerSecret, identify } from '../auth/authenticate.ts';
import { type Action, type Identity, may } from '../contracts/permissions.ts';
import type { Sql } from '../store/db.ts';
import { Refusal } from './errors.ts';

/** How long a key's answer is kept: a revoked key stops working on every gateway within this. */
export const KEY_CACHE_MS = 2000;
/** Kept answers at most; past it the cache starts again, so unknown keys sprayed at it cannot grow it. */
const KEY_CACHE_MAX = 10_000;

/**
 * Finds the identity of a request's API key (`Authorization: Bearer <key>`), as the API does, but keeps
 * each answer for KEY_CACHE_MS: a store read per request would cost more than the gateway may add.
 */
export class GatewayKeys {
  private readonly answers = new Map<string, { at: number; identity: Identity | null }>();

  constructor(
    private readonly sql: Sql,
    private readonly now: () => number = Date.now,
  ) {}

  /** The caller, refused unless its role may do `action` at all. */
  async caller(authorization: string | undefined, action: Action): Promise<Identity> {
    const identity = await this.identityOf(authorization);
    const verdict = may(identity, action);
    if (!verdict.allowed) throw new Refusal('forbidden', verdict.why);
    return identity;
  }

  private async identityOf(authorization: string | undefined): Promise<Identity> {
    const secret = bearerSecret(authorization);
    if (!secret) {
      throw new Refusal(
        'no_key',
        'an API key is needed: send the header Authorization: Bearer <key> (a client key from llmgw ctl token create --role client)',
      );
    }
    const at = this.now();
    let answer = this.answers.get(secret);
    if (!answer || at - answer.at >= KEY_CACHE_MS) {
      const found = await identify(this.sql, secret, at);
      if (this.answers.size >= KEY_CACHE_MAX) this.answers.clear();
      answer = { at, identity: 'identity' in found ? found.identity : null };
      this.answers.set(secret, answer);
    }
    if (!answer.identity) {
      throw new Refusal('unknown_key', 'this API key is unknown, was revoked or expired');
    }
    return answer.identity;
  }
}
