/**
 * A reading shared by every caller: taken at most once per `maxAgeMs` (counted from when the read
 * began), and one read at a time; callers that come while it runs wait for it. A failed read is not
 * kept: its callers get the error, and the next caller reads again. A caller that knows of a change
 * at `notBefore` gets a read begun after it: neither a kept one nor one under way that began earlier.
 * Those callers share the one read that begins when the read under way ends, so that callers coming
 * one after another (reconcilers woken together) do not each start a read of their own.
 */
export function sharedReading<T>(
  read: () => Promise<T>,
  maxAgeMs: number,
  clock: () => number = Date.now,
): (notBefore?: number) => Promise<T> {
  let kept: { value: T; at: number } | null = null;
  let running: { value: Promise<T>; at: number } | null = null;
  let next: Promise<T> | null = null;
  const begin = (): Promise<T> => {
    const at = clock();
    const reading = {
      at,
      value: (async () => {
        const value = await read();
        if (!kept || kept.at <= at) kept = { value, at };
        return value;
      })(),
    };
    running = reading;
    reading.value
      .finally(() => {
        if (running === reading) running = null;
      })
      .catch(() => {}); // its callers get the error
    return reading.value;
  };
  return (notBefore = Number.NEGATIVE_INFINITY) => {
    if (kept && clock() - kept.at < maxAgeMs && kept.at >= notBefore) return Promise.resolve(kept.value);
    if (!running) return begin();
    if (running.at >= notBefore) return running.value;
    if (!next) {
      next = running.value
        .catch(() => {})
        .then(() => {
          next = null;
          return begin();
        });
    }
    return next;
  };
}
