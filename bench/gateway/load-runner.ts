// One load generator run in a child process (load.ts), so that its CPU is not the router's; shared by
// the gateway bench and its side-by-side run against the peers.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { watchedAs } from './stalls.ts';

export interface Load {
  ttfts: number[];
  /** When each timed request was sent (ms since the epoch), with `stalls`. */
  sent?: number[];
  answered: number;
  total: number;
  failed: number;
  seconds: number;
}

const loadScript = fileURLToPath(new URL('./load.ts', import.meta.url));

/**
 * Runs `concurrency` clients against `base` for `seconds`, timing first tokens or counting answers.
 * With `stalls`, the clients' process writes its collections down as `clients` (stalls.ts), and the
 * answer says when each timed request was sent.
 */
export async function load(
  base: string,
  key: string,
  mode: 'ttft' | 'rps',
  concurrency: number,
  seconds: number,
  stalls = false,
): Promise<Load> {
  const watched = stalls ? watchedAs('clients') : { args: [], env: {} };
  const argv = [
    ...watched.args,
    ...['--import', 'tsx', loadScript, base, key, mode, String(concurrency), String(seconds)],
    ...(stalls ? ['sent'] : []),
  ];
  const { stdout } = await promisify(execFile)(process.execPath, argv, {
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, ...watched.env },
  });
  return JSON.parse(stdout);
}

/** The q-quantile of the samples (nearest rank), NaN when there are none. */
export const quantile = (samples: number[], q: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? Number.NaN;
};
