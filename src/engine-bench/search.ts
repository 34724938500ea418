import { highestMeeting, type Level, meetsSlo, type Slo } from './level.ts';

export interface KneeResult {
  /** Every level measured, in the order they ran. */
  levels: Level[];
  /** The highest concurrency that met the SLO (null: not even one request at a time does). */
  best: Level | null;
  /** True when the cap itself met the SLO: the engine may serve more than was tried. */
  capped: boolean;
}

/**
 * Finds the highest concurrency at which an engine meets its SLO: levels 1, 2, 4, ... (up to
 * `maxConcurrency`) until one misses, then bisects between the last level that met and the first that
 * missed. It measures about log2(answer) * 2 levels, and assumes what holds at a load holds below it.
 */
export async function findKnee(
  measure: (concurrency: number) => Promise<Level>,
  slo: Slo,
  maxConcurrency: number,
  onLevel: (level: Level) => void = () => {},
): Promise<KneeResult> {
  const levels: Level[] = [];
  const meets = async (concurrency: number) => {
    const level = await measure(concurrency);
    levels.push(level);
    onLevel(level);
    return meetsSlo(level, slo);
  };

  let good = 0;
  let bad: number | null = null;
  for (
    let concurrency = 1;
    bad === null && good < maxConcurrency;
    concurrency = Math.min(concurrency * 2, maxConcurrency)
  ) {
    if (await meets(concurrency)) good = concurrency;
    else bad = concurrency;
  }
  while (bad !== null && bad - good > 1) {
    const middle = Math.floor((good + bad) / 2);
    if (await meets(middle)) good = middle;
    else bad = middle;
  }
  return { levels, best: highestMeeting(levels, slo), capped: bad === null };
}
