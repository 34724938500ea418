// What idle models cost: the API and worker process (one process, as in `llmgw dev`), the Temporal
// server and Postgres, sampled over a quiet window before and after creating N models that have
// nothing to do (min_replicas 0, no load; or --min-replicas 1: one replica each, no load), each with
// its reconciler resyncing every 30 s (a model at rest every 4 x 30 s).
// Reproduce: npm run bench -- idle [--models 1000] [--min-replicas 0] [--idle-s 150] [--baseline-s 20] [--cache N]
import { readdirSync, readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { processMetrics } from '../../src/metrics/registry.ts';
import { sharedServices } from '../../test/support/services.ts';
import { eventually, startStack } from '../../test/support/stack.ts';

const { values } = parseArgs({
  options: {
    models: { type: 'string', default: '1000' },
    // Long enough for every model at rest to look again once (4 resyncs of 30 s, +10%).
    'idle-s': { type: 'string', default: '150' },
    'baseline-s': { type: 'string', default: '20' },
    /** LLMGW_WORKFLOW_CACHE: reconcilers kept in memory (default: the configured default). */
    cache: { type: 'string' },
    /** 1: each model keeps a replica running, so none is at rest and each looks again every 30 s. */
    'min-replicas': { type: 'string', default: '0' },
  },
});
const models = Number(values.models);
const idleS = Number(values['idle-s']);
const baselineS = Number(values['baseline-s']);
const minReplicas = Number(values['min-replicas']);

/** Linux's clock ticks per second for /proc/PID/stat (sysconf(_SC_CLK_TCK), 100 on every common kernel). */
const TICKS_PER_S = 100;

const commandLine = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
const allPids = () =>
  readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .map(Number);

/** The fields of /proc/PID/stat after the command, which is in parentheses and may hold spaces. */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** A process found by its command line, with its children (Postgres serves each connection in one). */
function processTree(matches: (args: string[]) => boolean): number[] {
  const parentOf = new Map<number, number>();
  let root: number | undefined;
  for (const pid of allPids()) {
    try {
      if (root === undefined && matches(commandLine(pid))) root = pid;
      parentOf.set(pid, Number(statFields(pid)[1]));
    } catch {} // the process ended meanwhile
  }
  if (root === undefined) return [];
  return [root, ...[...parentOf].filter(([, parent]) => parent === root).map(([pid]) => pid)];
}

/**
 * CPU seconds used so far and resident memory (MiB) of these processes; ended ones count 0. Memory is
 * the proportional share (Pss): Postgres's processes share their buffers, which RSS would count in each.
 */
function usage(pids: number[]) {
  let cpuS = 0;
  let rssMib = 0;
  for (const pid of pids) {
    try {
      const stat = statFields(pid);
      cpuS += (Number(stat[11]) + Number(stat[12])) / TICKS_PER_S; // utime, stime
      const rss = /Pss:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8'));
      rssMib += rss ? Number(rss[1]) / 1024 : 0;
    } catch {}
  }
  return { cpuS, rssMib };
}

interface Window {
  /** Share of one core used, averaged over the window. */
  cpu: number;
  rssMib: number;
  heapMib?: number;
}

/** Reconciler passes this process's worker has made so far. */
const passesSoFar = async () =>
  (await processMetrics.passSeconds.get()).values.find((v) => v.metricName?.endsWith('_count'))?.value ?? 0;

/** Samples this process and the other processes over `seconds` of quiet; RSS is the window's mean. */
async function sampleIdle(seconds: number, find: Record<string, () => number[]>) {
  const passesBefore = await passesSoFar();
  // Found afresh: Postgres starts a process for each new connection.
  const others = Object.fromEntries(Object.entries(find).map(([k, pids]) => [k, pids()]));
  const start = { own: process.cpuUsage(), at: performance.now() };
  const othersAtStart = Object.fromEntries(Object.entries(others).map(([k, pids]) => [k, usage(pids)]));
  const rss: number[] = [];
  const heap: number[] = [];
  const otherRss: Record<string, number[]> = Object.fromEntries(Object.keys(others).map((k) => [k, []]));
  const deadline = Date.now() + seconds * 1000;
  while (Date.now() < deadline) {
    const memory = process.memoryUsage();
    rss.push(memory.rss / 2 ** 20);
    heap.push(memory.heapUsed / 2 ** 20);
    for (const [k, pids] of Object.entries(others)) otherRss[k].push(usage(pids).rssMib);
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  const wallS = (performance.now() - start.at) / 1000;
  const own = process.cpuUsage(start.own);
  const mean = (list: number[]) => list.reduce((a, b) => a + b, 0) / list.length;
  const passes = (await passesSoFar()) - passesBefore;
  const result: Record<string, Window> = {
    llmgw: { cpu: (own.user + own.system) / 1e6 / wallS, rssMib: mean(rss), heapMib: mean(heap) },
  };
  for (const [k, pids] of Object.entries(others)) {
    result[k] = { cpu: (usage(pids).cpuS - othersAtStart[k].cpuS) / wallS, rssMib: mean(otherRss[k]) };
  }
  return { windows: result, passesPerS: passes / wallS };
}

const services = await sharedServices();
const temporalPort = services.temporalAddress.split(':').at(-1);
const postgresPort = new URL(services.databaseUrl).port;
const others = {
  temporal: () => processTree((args) => args.includes('start-dev') && args.includes(temporalPort ?? '')),
  postgres: () => processTree((args) => args[0].endsWith('postgres') && args.includes(postgresPort)),
};
for (const [name, pids] of Object.entries(others)) {
  if (pids().length === 0) process.stderr.write(`(the ${name} process was not found: its figures are 0)\n`);
}

const stack = await startStack({
  worker: true,
  env: { LLMGW_RESYNC_S: '30', ...(values.cache ? { LLMGW_WORKFLOW_CACHE: values.cache } : {}) },
  nodes: [
    { name: 'cpu-1', capacity: { cores: 2 * models, memory_gib: 4 * models }, gpu_model: null, labels: {} },
  ],
});
process.stderr.write(`baseline: ${baselineS} s idle without models ...\n`);
const { windows: before } = await sampleIdle(baselineS, others);

const names = Array.from({ length: models }, (_, i) => `idle-${i}`);
const createdAt = performance.now();
for (let i = 0; i < names.length; i += 20) {
  await Promise.all(
    names.slice(i, i + 20).map(async (name) => {
      const answer = await stack.call('PUT', `/api/v1/models/${name}`, {
        min_replicas: minReplicas,
        max_replicas: 2,
        profiles: [
          { name: 'cpu', priority: 1, resources: { cores: 1, memory_gib: 2 }, default_concurrency: 8 },
        ],
      });
      if (answer.status >= 300)
        throw new Error(`PUT ${name}: ${answer.status} ${JSON.stringify(answer.body)}`);
    }),
  );
}
// A reconciler has run when its first decision is stored; the replicas it wants are then ready.
await eventually(
  `${models} reconcilers each through a first pass`,
  async () => {
    const [{ decided }] = await stack.sql<{ decided: number }[]>`
      select count(distinct model)::int as decided from decisions`;
    const [{ ready }] = await stack.sql<{ ready: number }[]>`
      select count(*)::int as ready from replicas where state = 'ready'`;
    return decided >= models && ready >= models * minReplicas;
  },
  600_000,
);
const readyS = (performance.now() - createdAt) / 1000;
process.stderr.write(
  `${models} models with their reconcilers in ${readyS.toFixed(1)} s; ${idleS} s idle ...\n`,
);
const { windows: after, passesPerS } = await sampleIdle(idleS, others);
await stack.stop();

const perThousand = (a: number, b: number) => ((b - a) * 1000) / Math.max(models, 1);
/** CPU (ms) one pass costs a process: what the models added, over the passes made meanwhile. */
const msPerPass = (name: string) =>
  ((after[name].cpu - before[name].cpu) * 1000) / Math.max(passesPerS, 1e-9);
const row = (cells: string[]) => console.log(cells.map((cell, i) => cell.padEnd(i ? 14 : 24)).join(''));
console.log(
  `\nidle cost of ${models} models (min_replicas ${minReplicas}, resync 30 s, ${stack.config.workflowCache} reconcilers cached), means over ${idleS} s`,
);
row(['process', 'RSS MiB, 0', `RSS MiB, ${models}`, 'CPU %, 0', `CPU %, ${models}`, 'CPU ms/pass']);
for (const name of Object.keys(after)) {
  row([
    name,
    before[name].rssMib.toFixed(0),
    after[name].rssMib.toFixed(0),
    (before[name].cpu * 100).toFixed(1),
    (after[name].cpu * 100).toFixed(1),
    msPerPass(name).toFixed(1),
  ]);
}
row(['llmgw heap used MiB', before.llmgw.heapMib!.toFixed(0), after.llmgw.heapMib!.toFixed(0)]);
row(['passes per s', passesPerS.toFixed(2)]);
row(['reconcilers ready in', `${readyS.toFixed(1)} s`]);
row([
  'reproduce',
  `npm run bench -- idle --models ${models} --min-replicas ${minReplicas} --idle-s ${idleS} --cache ${stack.config.workflowCache}`,
]);
const figures = Object.keys(after).flatMap((name) => [
  `${name}_rss_mib_per_1000=${perThousand(before[name].rssMib, after[name].rssMib).toFixed(0)}`,
  `${name}_cpu_pct_per_1000=${(perThousand(before[name].cpu, after[name].cpu) * 100).toFixed(1)}`,
  `${name}_cpu_ms_per_pass=${msPerPass(name).toFixed(1)}`,
]);
console.log(
  `RESULT idle models=${models} min_replicas=${minReplicas} idle_s=${idleS} cache=${stack.config.workflowCache} passes_per_s=${passesPerS.toFixed(2)} llmgw_rss_mib=${after.llmgw.rssMib.toFixed(0)} ${figures.join(' ')}`,
);
process.exit(0);
