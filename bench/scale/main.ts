// How llmgw grows with the models it runs (issue 18), through the real API, Temporal, worker(s) and
// Postgres, each worker a `llmgw worker` process, on nodes of 8 GPUs (small nodes: reconcilers that all
// pick the fullest node collide there).
// Reproduce: npm run bench -- scale [--models 1000] [--workers 1]
// (LLMGW_TEST_TEMPORAL=server runs it on Temporal server on Postgres instead of the dev server.)
//  1. N models under one team limited to N GPUs, created 20 at a time: until each has its first replica;
//  2. 15 in flight for every model (capacity 10 per replica), reported again every 20 s (a load older
//     than LLMGW_LOAD_STALE_S, 60 s, counts as unknown): each waits on the limit; the limit raised to
//     2N: until every model has its second replica (the fan-out), and placements per second then;
//  3. one model's load stepped 10x, from 1 to 20 replicas: until all 20 are placed;
//  4. 20 models crossing their capacity at once: reaction p50/p99 from the report to the replica placed.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { freePort } from '../../src/cli/dev/ports.ts';
import { emptyDatabase, runLlmgw } from '../../test/support/split-stack.ts';
import { eventually, startStack } from '../../test/support/stack.ts';
import { cpuSeconds } from '../support/cpu-seconds.ts';

const { values } = parseArgs({
  options: { models: { type: 'string', default: '1000' }, workers: { type: 'string', default: '1' } },
});
const models = Number(values.models);
const workers = Number(values.workers);
if (!Number.isInteger(models) || models < 20 || !Number.isInteger(workers) || workers < 1) {
  console.error('usage: npm run bench -- scale [--models N (20 or more)] [--workers W (1 or more)]');
  process.exit(2);
}
const REACTING = 20;
const BURST = 20;

const nodeCount = Math.ceil((2 * models + BURST + 2 * REACTING) / 8) + 2;
const ENV = { LLMGW_RESYNC_S: '30', LLMGW_SIM_START_DELAY_MS: '300', LLMGW_SCALE_DOWN_WINDOW_S: '600' };
// The API (and this benchmark) in this process; each worker a `llmgw worker` process of its own, as
// deployed, so that the workers' reconcilers do not share a thread with the API they are measured through.
const databaseUrl = await emptyDatabase();
const stack = await startStack({
  databaseUrl,
  env: ENV,
  nodes: Array.from({ length: nodeCount }, (_, i) => ({
    name: `g${i}`,
    capacity: { gpus: 8, cores: 64, memory_gib: 1024 },
    gpu_model: 'H100',
    labels: {},
  })),
});
const workerProcesses = await Promise.all(
  Array.from({ length: workers }, async () =>
    runLlmgw('worker', {
      ...ENV,
      DATABASE_URL: databaseUrl,
      TEMPORAL_ADDRESS: stack.temporalAddress,
      TEMPORAL_NAMESPACE: stack.config.temporalNamespace,
      LLMGW_TASK_QUEUE: stack.config.taskQueue,
      LLMGW_METRICS_PORT: String(await freePort()),
    }),
  ),
);
await eventually(
  `${workers} worker(s) running`,
  async () => workerProcesses.every((w) => /llmgw worker on task queue/.test(w.output())),
  120_000,
);
/** CPU seconds used so far by the workers, this process (API and bench), Temporal and Postgres. */
const cpuUsed = () => {
  const workerPids = new Set(workerProcesses.map((w) => w.child.pid));
  return cpuSeconds(['workers', 'api', 'temporal', 'postgres'], (pid, comm) => {
    if (workerPids.has(pid)) return 'workers';
    if (pid === process.pid) return 'api';
    if (comm.startsWith('temporal')) return 'temporal';
    return comm === 'postgres' ? 'postgres' : undefined;
  });
};
/** A process's resident memory (MiB), from /proc. */
const rssOf = (pid: number) =>
  Number(/^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;
const progress = (line: string) => process.stderr.write(`${line}\n`);

const call = async (method: string, path: string, body?: unknown) => {
  const answer = await stack.call(method, path, body);
  if (answer.status >= 300)
    throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
};
const inBatches = async <T>(items: T[], size: number, each: (item: T) => Promise<unknown>) => {
  for (let i = 0; i < items.length; i += size) await Promise.all(items.slice(i, i + size).map(each));
};
const model = (name: string, owner: string | null, max: number) =>
  call('PUT', `/api/v1/models/${name}`, {
    ...(owner && { owner }),
    min_replicas: 1,
    max_replicas: max,
    profiles: [
      { name: 'h100', priority: 1, resources: { gpus: 1 }, gpu_model: 'H100', default_concurrency: 10 },
    ],
  });
const load = (name: string, inFlight: number) =>
  call('POST', `/api/v1/models/${name}/load`, { in_flight: inFlight });
// Watched in the store directly: polling the API would load the machine that is being measured.
const placed = async (prefix: string) =>
  new Map(
    (
      await stack.sql<{ model: string; n: number; last: Date }[]>`
        select model, count(*)::int as n, max(created_at) as last from replicas
        where model like ${`${prefix}%`} and state not in ('stopped', 'failed') group by model`
    ).map((row) => [row.model, { n: row.n, last: row.last.getTime() }]),
  );
/** Waits until every named model has `n` replicas placed; the time since `from` when the last one was. */
const allPlaced = async (what: string, prefix: string, names: string[], n: number, from: number) => {
  const done = await eventually(
    what,
    async () => {
      const now = await placed(prefix);
      const reached = names.filter((name) => (now.get(name)?.n ?? 0) >= n).length;
      progress(`${what}: ${reached}/${names.length} after ${((Date.now() - from) / 1000).toFixed(1)} s`);
      return reached === names.length && now;
    },
    600_000,
  );
  return Math.max(...names.map((name) => done.get(name)!.last)) - from;
};

await call('POST', '/api/v1/orgs', { name: 'Scale' });
const team = `team:${(await call('POST', '/api/v1/teams', { org: 'Scale', name: 'big' })).id}`;
await call('PUT', '/api/v1/quotas', { scope: team, limit: { gpus: models } });
const names = Array.from({ length: models }, (_, i) => `m-${String(i).padStart(4, '0')}`);

// 1. First replicas.
let started = Date.now();
await inBatches(names, 20, (name) => model(name, team, 2));
const createMs = Date.now() - started;
const firstMs = await allPlaced('first replicas', 'm-', names, 1, started);

// 2. The fan-out of a limit raise. The load is kept reported, as gateways do, so that it never goes stale.
const reportLoad = () => inBatches(names, 20, (name) => load(name, 15));
await reportLoad();
const keepReporting = setInterval(() => reportLoad().catch(console.error), 20_000);
await eventually(
  'every model waits on the limit',
  async () => {
    const [{ n }] = await stack.sql<{ n: number }[]>`
    select count(distinct d.model)::int as n from models m cross join lateral (
      select model, inputs from decisions where model = m.name order by id desc limit 1) d
    where d.inputs->'pending' @> '[{"code": "limit"}]'`;
    progress(`waiting on the limit: ${n}/${models}`);
    return n === models;
  },
  600_000,
);
started = Date.now();
const cpuBefore = cpuUsed();
await call('PUT', '/api/v1/quotas', { scope: team, limit: { gpus: 2 * models } });
const fanOutMs = await allPlaced('second replicas', 'm-', names, 2, started);
const cpuAfter = cpuUsed();
/** CPU milliseconds per placement in the fan-out, by process. */
const cpuPerPlacement = Object.fromEntries(
  Object.entries(cpuAfter).map(([who, s]) => [
    who,
    Math.round(((s - cpuBefore[who as keyof typeof cpuAfter]) * 1000) / models),
  ]),
) as Record<keyof typeof cpuAfter, number>;
const perSecond = models / (fanOutMs / 1000);
clearInterval(keepReporting);

// 3. A 10x load step on one model.
await model('burst', null, BURST);
await allPlaced('burst: first replica', 'burst', ['burst'], 1, Date.now());
started = Date.now();
await load('burst', 10 * BURST);
const burstMs = await allPlaced('burst: 20 replicas', 'burst', ['burst'], BURST, started);

// 4. Reaction of 20 models crossing their capacity at once.
const reacting = Array.from({ length: REACTING }, (_, i) => `react-${i}`);
await inBatches(reacting, 20, (name) => model(name, null, 2));
await allPlaced('reacting: first replicas', 'react-', reacting, 1, Date.now());
const sent = new Map<string, number>();
await Promise.all(
  reacting.map(async (name) => {
    sent.set(name, Date.now());
    await load(name, 11);
  }),
);
const reacted = await eventually(
  '20 models react',
  async () => {
    const now = await placed('react-');
    return reacting.every((name) => now.get(name)?.n === 2) && now;
  },
  120_000,
);
const reactions = reacting.map((name) => reacted.get(name)!.last - sent.get(name)!).sort((a, b) => a - b);
const at = (q: number) => reactions[Math.min(reactions.length - 1, Math.ceil(q * reactions.length) - 1)];

const apiRssMb = Math.round(process.memoryUsage().rss / 2 ** 20);
const workerRssMb = workerProcesses.map((w) => Math.round(rssOf(w.child.pid!)));
const [{ connections }] = await stack.sql<{ connections: number }[]>`
  select count(*)::int as connections from pg_stat_activity where datname = current_database()`;
await Promise.all(workerProcesses.map((worker) => worker.stop()));
await stack.stop();

const temporal = process.env.LLMGW_TEST_TEMPORAL === 'server' ? 'server' : 'dev';
const row = (k: string, v: string) => console.log(`${k.padEnd(48)} ${v}`);
console.log(
  `\nscale: ${models} models, ${workers} worker(s), Temporal ${temporal}, ${nodeCount} nodes of 8 GPUs`,
);
row('creating the models (s)', (createMs / 1000).toFixed(1));
row('every model has its first replica (s)', (firstMs / 1000).toFixed(1));
row('limit raised -> every model placed its second (s)', (fanOutMs / 1000).toFixed(1));
row('placements per second in the fan-out', perSecond.toFixed(0));
const { workers: cpuWorkers, api: cpuApi, temporal: cpuTemporal, postgres: cpuPostgres } = cpuPerPlacement;
row(
  'CPU ms per placement: workers/API/Temporal/PG',
  `${cpuWorkers} / ${cpuApi} / ${cpuTemporal} / ${cpuPostgres}`,
);
row(`a 10x load step covered, 1 -> ${BURST} replicas (s)`, (burstMs / 1000).toFixed(2));
row(`reaction p50 / p99, ${REACTING} models at once (ms)`, `${at(0.5)} / ${at(0.99)}`);
row('RSS of each worker process (MiB)', workerRssMb.join(' / '));
row('RSS of the API and bench process (MiB)', String(apiRssMb));
row('store connections', String(connections));
row('reproduce', `npm run bench -- scale --models ${models} --workers ${workers}`);
console.log(
  `RESULT scale models=${models} workers=${workers} temporal=${temporal} first_replicas_s=${(firstMs / 1000).toFixed(1)} ` +
    `fan_out_s=${(fanOutMs / 1000).toFixed(1)} placements_per_s=${perSecond.toFixed(0)} cpu_ms_per_placement_workers=${cpuWorkers} cpu_ms_per_placement_api=${cpuApi} cpu_ms_per_placement_temporal=${cpuTemporal} cpu_ms_per_placement_postgres=${cpuPostgres} burst_s=${(burstMs / 1000).toFixed(2)} ` +
    `reaction_p50_ms=${at(0.5)} reaction_p99_ms=${at(0.99)} worker_rss_mib=${Math.max(...workerRssMb)} api_rss_mib=${apiRssMb} store_connections=${connections}`,
);
