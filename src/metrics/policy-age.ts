/**
 * How long a worker has been deciding with a quota policy it cannot refresh. The cache keeps the
 * last good policy when the store fails (POLICY.md "Freshness"); this counts from that read while
 * re-reads fail, and is 0 once one succeeds. Counting only while reads fail keeps an idle worker
 * (no passes, so no reads) from looking stale.
 */
export class PolicyAge {
  /** When the policy in use was read (ms since the epoch), while re-reads fail; else null. */
  private staleSince: number | null = null;

  constructor(private readonly clock: () => number = Date.now) {}

  read(): void {
    this.staleSince = null;
  }

  /** A re-read failed; `ageMs` is how old the kept policy is. */
  stale(ageMs: number): void {
    this.staleSince ??= this.clock() - ageMs;
  }

  seconds(): number {
    return this.staleSince === null ? 0 : (this.clock() - this.staleSince) / 1000;
  }
}
