/**
 * At most one event per key in each window, and how many it held back since the last one let through,
 * so that a flood costs one log line per window and key while its size is still told. Many keys (source
 * addresses) cannot make it grow: holding `maxKeys`, it forgets those whose window has passed, and holds
 * back any new key while none has.
 *
 * Kept by hand rather than lru-cache: lru-cache evicts a live window to take a new key (which would let a
 * flood of addresses reset another's window), and its purgeStale scans every key: 2 ms a new key when
 * full of live windows at 10,000 keys, against 0.6 µs here, which stops at the first live one (npm run
 * bench -- libraries).
 */
export class PerKeyLimit {
  // In the order of the events let through, oldest first, so that the ones to forget come first.
  readonly #last = new Map<string, { at: number; held: number }>();

  constructor(
    private readonly windowMs: number,
    private readonly maxKeys = 10_000,
  ) {}

  /** How many were held back before this event when it may go through now; null when it is held back. */
  admit(key: string, now: number): number | null {
    const last = this.#last.get(key);
    if (last && now - last.at < this.windowMs) {
      last.held += 1;
      return null;
    }
    if (!last && this.#last.size >= this.maxKeys) {
      for (const [old, { at }] of this.#last) {
        if (now - at < this.windowMs) break;
        this.#last.delete(old);
      }
      if (this.#last.size >= this.maxKeys) return null;
    }
    this.#last.delete(key);
    this.#last.set(key, { at: now, held: 0 });
    return last?.held ?? 0;
  }
}
