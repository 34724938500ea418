/**
 * Failed authentications slowed per source address (a token bucket): each address may fail `burst`
 * times at once, then once a second; while its bucket is empty every request from it is answered 429
 * with Retry-After before its token is looked at, valid or not, so the answers tell a guesser nothing
 * about the tokens it tries. A request that authenticates takes nothing from the bucket. Memory is
 * bounded: holding `maxKeys` addresses, it forgets those whose bucket is full again, and throttles no
 * new address until one is (so many addresses cannot make it grow).
 */
export class FailureThrottle {
  readonly #buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    readonly burst: number,
    private readonly perSecond = 1,
    private readonly maxKeys = 10_000,
  ) {}

  #tokens(address: string, now: number): number {
    const bucket = this.#buckets.get(address);
    if (!bucket) return this.burst;
    return Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond);
  }

  /** Whole seconds the address must wait before its next try; 0 when it may try now. */
  waitS(address: string, now: number): number {
    const tokens = this.#tokens(address, now);
    return tokens >= 1 ? 0 : Math.ceil((1 - tokens) / this.perSecond);
  }

  /** Takes one try from the address's bucket. */
  failed(address: string, now: number): void {
    const tokens = this.#tokens(address, now) - 1;
    this.#buckets.delete(address);
    if (this.#buckets.size >= this.maxKeys) this.#forgetFull(now);
    if (this.#buckets.size < this.maxKeys) this.#buckets.set(address, { tokens, at: now });
  }

  #forgetFull(now: number) {
    for (const [address, bucket] of this.#buckets) {
      if (bucket.tokens + ((now - bucket.at) / 1000) * this.perSecond >= this.burst)
        this.#buckets.delete(address);
    }
  }
}
