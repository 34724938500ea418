import type { QuotaPolicy } from '../store/snapshot.ts';

export interface PolicyCacheEvents {
  /** A read failed and the last good policy is used instead. */
  onStale?(error: unknown, ageMs: number): void;
  onRead?(): void;
}

/**
 * The quota policy and measurements, read from the store at most every `refreshMs` per worker and at
 * once after a change. When the store fails, the last good policy is kept (a database hiccup drops no
 * guarantee or limit) and the store is not asked again before `refreshMs` has passed.
 */
export class PolicyCache {
  private value: QuotaPolicy | null = null;
  private readAt = Number.NEGATIVE_INFINITY;
  private failedAt = Number.NEGATIVE_INFINITY;
  /** The read under way, and when it started: what it returns is as old as that. */
  private reading: { startedAt: number; policy: Promise<QuotaPolicy> } | null = null;

  constructor(
    /** Reads the policy from the store (readQuotaPolicy). */
    private readonly read: () => Promise<QuotaPolicy>,
    private readonly refreshMs: number,
    private readonly events: PolicyCacheEvents = {},
    private readonly clock: () => number = Date.now,
  ) {}

  /** The policy, re-read when older than the refresh period or than `changedAt` (a change signal). */
  async get(changedAt = Number.NEGATIVE_INFINITY): Promise<QuotaPolicy> {
    const now = this.clock();
    const fresh = now - this.readAt < this.refreshMs && this.readAt >= changedAt;
    const resting = now - this.failedAt < this.refreshMs;
    if (this.value && (fresh || resting)) return this.value;
    // A read that started before the change may miss it: start another rather than join it.
    if (!this.reading || this.reading.startedAt < changedAt) {
      const reading = { startedAt: now, policy: this.read() };
      reading.policy
        .finally(() => {
          if (this.reading === reading) this.reading = null;
        })
        .catch(() => {});
      this.reading = reading;
    }
    const { startedAt, policy } = this.reading;
    try {
      this.value = await policy;
      this.readAt = Math.max(this.readAt, startedAt);
      this.failedAt = Number.NEGATIVE_INFINITY;
      this.events.onRead?.();
      return this.value;
    } catch (error) {
      if (!this.value) throw error;
      this.failedAt = now;
      this.events.onStale?.(error, now - this.readAt);
      return this.value;
    }
  }

  /** How old the policy in use is (ms); Infinity before the first read. */
  age(): number {
    return this.clock() - this.readAt;
  }
}
