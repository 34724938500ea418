import { bearerSecret, identify } from '../auth/authenticate.ts';
import { type Action, type Identity, may } from '../contracts/permissions.ts';
import type { Sql } from '../store/db.ts';
import { Refusal } from './errors.ts';

/** How long a key's answer is used: a revoked key stops working on every gateway within this. */
export const KEY_CACHE_MS = 2000;
/**
 * Past this age an answer still in use is read again in the background: a key in steady use never waits
 * on the store, which at each expiry held up every request that came during the read (the p99's tail).
 */
export const KEY_REFRESH_MS = KEY_CACHE_MS / 2;
/** Kept answers at most; past it the cache starts again, so unknown keys sprayed at it cannot grow it. */
const KEY_CACHE_MAX = 10_000;

/** What the store says of a key (authenticate.ts `identify`). */
export type KeyLookup = (secret: string, now: number) => ReturnType<typeof identify>;

interface Answer {
  /** When the read that gave it began: the answer is no older than the store's state then. */
  at: number;
  identity: Identity | null;
}

/**
 * Finds the identity of a request's API key (`Authorization: Bearer <key>`), as the API does, but keeps
 * each answer for KEY_CACHE_MS: a store read per request would cost more than the gateway may add. One
 * read per key at a time: the requests that come while it runs share it.
 */
export class GatewayKeys {
  private readonly answers = new Map<string, Answer>();
  private readonly reading = new Map<string, { at: number; answer: Promise<Answer> }>();

  constructor(
    private readonly lookup: KeyLookup,
    private readonly now: () => number = Date.now,
  ) {}

  /** The keys of the store behind `sql`. */
  static of(sql: Sql): GatewayKeys {
    return new GatewayKeys((secret, now) => identify(sql, secret, now));
  }

  /**
   * The caller, refused unless its role may do `action` at all: at once (no promise) while its key's
   * answer is kept, as it is for nearly every request; a promise when the store must be read.
   */
  caller(authorization: string | undefined, action: Action): Identity | Promise<Identity> {
    const secret = bearerSecret(authorization);
    if (!secret) {
      throw new Refusal(
        'no_key',
        'an API key is needed: send the header Authorization: Bearer <key> (a client key from llmgw ctl token create --role client)',
      );
    }
    const kept = this.answers.get(secret);
    const age = kept ? this.now() - kept.at : Number.POSITIVE_INFINITY;
    if (age >= KEY_CACHE_MS) return this.read(secret).then((answer) => allowedTo(answer, action));
    // A failed read ahead of time changes nothing: the answer expires, and the next request reads.
    if (age >= KEY_REFRESH_MS) this.read(secret).catch(() => {});
    return allowedTo(kept!, action);
  }

  /** A read of the key, shared with the one under way unless that began too long ago to wait on. */
  private read(secret: string): Promise<Answer> {
    const now = this.now();
    const under = this.reading.get(secret);
    if (under && now - under.at < KEY_CACHE_MS) return under.answer;
    const answer = this.lookup(secret, now).then((found) => {
      const read = { at: now, identity: 'identity' in found ? found.identity : null };
      if (this.answers.size >= KEY_CACHE_MAX) this.answers.clear();
      if ((this.answers.get(secret)?.at ?? -Infinity) < now) this.answers.set(secret, read);
      return read;
    });
    const reading = { at: now, answer };
    this.reading.set(secret, reading);
    const done = () => {
      if (this.reading.get(secret) === reading) this.reading.delete(secret);
    };
    answer.then(done, done);
    return answer;
  }
}

/** The answer's identity, refused unless it is known and its role may do `action` at all. */
function allowedTo(answer: Answer, action: Action): Identity {
  if (!answer.identity) throw new Refusal('unknown_key', 'this API key is unknown, was revoked or expired');
  const verdict = may(answer.identity, action);
  if (!verdict.allowed) throw new Refusal('forbidden', verdict.why);
  return answer.identity;
}
