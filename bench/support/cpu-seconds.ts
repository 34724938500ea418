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

/** What a process tree has used so far: CPU seconds, and write system calls (socket writes among them). */
export interface TreeUsage {
  cpuSeconds: number;
  /** `syscw` of /proc/PID/io: write(2) and writev(2) calls, a socket's included (root may read any). */
  writeCalls: number;
}

/** What process `root` and every process beneath it (a cluster's workers) have used so far. */
export function treeUsage(root: number): TreeUsage {
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
  const total = { cpuSeconds: 0, writeCalls: 0 };
  for (const [pid, seconds] of used) {
    if (!within(pid)) continue;
    total.cpuSeconds += seconds;
    total.writeCalls += writeCallsOf(pid);
  }
  return total;
}

/** The write system calls process `pid` made, 0 if it ended meanwhile. */
function writeCallsOf(pid: number): number {
  try {
    return Number(/^syscw: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}
