import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ: what /proc counts CPU time in, 100 on Linux everywhere. */
const CLOCK_TICKS = 100;

/**
 * CPU seconds used so far by the running processes, summed by the group `groupOf` puts each in (by its
 * pid and command name); a process it puts in none is left out. Read from /proc: Linux only.
 */
export function cpuSeconds<G extends string>(
  groups: readonly G[],
  groupOf: (pid: number, comm: string) => G | undefined,
): Record<G, number> {
  const used = Object.fromEntries(groups.map((group) => [group, 0])) as Record<G, number>;
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // it ended meanwhile
    }
    const group = groupOf(Number(entry), stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')));
    if (group === undefined) continue;
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    used[group] += (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  }
  return used;
}

/** CPU seconds used so far by process `root` and every process beneath it (a cluster's workers). */
export function treeCpuSeconds(root: number): number {
  const parent = new Map<number, number>();
  const used = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue;
    }
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    parent.set(Number(entry), Number(fields[1]));
    used.set(Number(entry), (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS);
  }
  const within = (pid: number): boolean => {
    for (let at: number | undefined = pid; at !== undefined && at > 1; at = parent.get(at)) {
      if (at === root) return true;
    }
    return false;
  };
  let total = 0;
  for (const [pid, seconds] of used) if (within(pid)) total += seconds;
  return total;
}
