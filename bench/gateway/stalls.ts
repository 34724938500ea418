// The gateway bench's --stalls: which processes were collecting garbage while the slowest requests
// waited for their first byte. A collection stops every request its process holds at once: in the
// engines or the clients it slows every router alike, in a router only that router's requests.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The module that has a process write its collections down (loaded with `node --import`). */
const collectionsModule = fileURLToPath(new URL('./collections.mjs', import.meta.url));

/**
 * Node's arguments and the environment that have a process write its collections down as `role`, into
 * the folder BENCH_STALLS_DIR names (which the bench sets for every process it starts).
 */
export const watchedAs = (role: string) => ({
  args: ['--import', collectionsModule],
  env: { BENCH_STALLS_ROLE: role },
});

/**
 * The same for a process that starts others with its own arguments but the environment (llmgw's gateway
 * and its workers): the module goes into NODE_OPTIONS, after the caller's.
 */
export const watchedTreeAs = (role: string) => ({
  NODE_OPTIONS: [process.env.NODE_OPTIONS, `--import ${JSON.stringify(collectionsModule)}`]
    .filter(Boolean)
    .join(' '),
  BENCH_STALLS_ROLE: role,
});

/** A request of a run: when it was sent (ms since the epoch) and its TTFT (ms). */
export interface SentRequest {
  sent: number;
  ttft: number;
}

/** A process's collections, as [start, end] in ms since the epoch, sorted by start. */
export type Collections = readonly (readonly [number, number])[];

/** What the slowest requests overlapped, and what every request did, as shares (0 to 1) by source. */
export interface StallSources {
  slowest: number;
  /** Of the slowest, the share sent while the source collected (a request may count for several). */
  ofSlowest: Record<string, number>;
  /** Of the slowest, the share that overlapped no source's collection. */
  noneOfSlowest: number;
  /** Of all requests, the share that overlapped the source's collections: what chance alone gives. */
  ofAll: Record<string, number>;
}

/** Every role's collections written in `dir` by collections.mjs, merged over its processes and sorted. */
export function readCollections(dir: string): Map<string, Collections> {
  const byRole = new Map<string, [number, number][]>();
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.jsonl'))) {
    const role = file.slice(0, file.lastIndexOf('-'));
    const spans = byRole.get(role) ?? byRole.set(role, []).get(role)!;
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      if (!line) continue;
      const [start, duration] = JSON.parse(line) as [number, number];
      spans.push([start, start + duration]);
    }
  }
  for (const spans of byRole.values()) spans.sort((a, b) => a[0] - b[0]);
  return byRole;
}

/**
 * A test of whether a collection of `spans` ran at some moment in [from, to]. Of the collections that
 * started by `to`, one ran on past `from` when the latest end among them did: that end is kept for
 * each, so that a long collection is found behind shorter ones that began after it.
 */
export function collectingDuring(spans: Collections): (from: number, to: number) => boolean {
  const latestEnd: number[] = [];
  for (const [i, [, end]] of spans.entries()) latestEnd.push(Math.max(end, latestEnd[i - 1] ?? end));
  return (from, to) => {
    let low = 0;
    let high = spans.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (spans[mid][0] <= to) low = mid + 1;
      else high = mid;
    }
    return low > 0 && latestEnd[low - 1] >= from;
  };
}

/** Of the slowest `share` of `requests` (at least one), which sources were collecting as each waited. */
export function stallSources(
  requests: readonly SentRequest[],
  sources: ReadonlyMap<string, Collections>,
  share = 0.01,
): StallSources {
  const tests = [...sources].map(([source, spans]) => [source, collectingDuring(spans)] as const);
  const during = (r: SentRequest) =>
    tests.filter(([, collecting]) => collecting(r.sent, r.sent + r.ttft)).map(([source]) => source);
  const slowest = [...requests]
    .sort((a, b) => b.ttft - a.ttft)
    .slice(0, Math.max(1, Math.ceil(share * requests.length)))
    .map(during);
  const shareOf = <T>(of: readonly T[], test: (item: T) => boolean) =>
    of.length === 0 ? 0 : of.filter(test).length / of.length;
  const ofSlowest: Record<string, number> = {};
  const ofAll: Record<string, number> = {};
  for (const [source, collecting] of tests) {
    ofSlowest[source] = shareOf(slowest, (found) => found.includes(source));
    ofAll[source] = shareOf(requests, (r) => collecting(r.sent, r.sent + r.ttft));
  }
  const noneOfSlowest = shareOf(slowest, (found) => found.length === 0);
  return { slowest: slowest.length, ofSlowest, noneOfSlowest, ofAll };
}

/** A row of the table: a router (or the engines called directly) and its requests at one level. */
export interface StallRow {
  name: string;
  requests: readonly SentRequest[];
  /** The role under which the router's own processes wrote their collections, if they did (Node only). */
  own?: string;
}

const SHARED = ['engines', 'clients'] as const;
const percent = (share: number) => `${(share * 100).toFixed(0)}%`;

/**
 * The table --stalls prints for one level: for each row, of its slowest 1% of requests, the share sent
 * while the engines, the clients or the router's own processes collected, and while none did; in
 * brackets, the same share of all its requests.
 */
export function stallTable(
  concurrency: number,
  rows: readonly StallRow[],
  roles: ReadonlyMap<string, Collections>,
) {
  const lines = [
    `| slowest 1% at ${concurrency} in flight, sent while collecting (of all requests) | engines | clients | the router's own | none |`,
    '|---|---|---|---|---|',
  ];
  for (const row of rows) {
    const sources = new Map(
      [...SHARED, ...(row.own ? [row.own] : [])].map((role) => [role, roles.get(role) ?? []] as const),
    );
    const found = stallSources(row.requests, sources);
    const cell = (role: string) => `${percent(found.ofSlowest[role])} (${percent(found.ofAll[role])})`;
    const own = row.own && roles.has(row.own) ? cell(row.own) : '—';
    lines.push(
      `| ${row.name} (${found.slowest} of ${row.requests.length}) | ${cell('engines')} | ${cell('clients')} | ${own} | ${percent(found.noneOfSlowest)} |`,
    );
  }
  return lines.join('\n');
}
