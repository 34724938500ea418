// How fast llmgw starts replicas on Kubernetes (issue 33), against the simulated cluster, through the
// real API, Temporal, worker and Postgres: the first replicas of MODELS models on NODES fake 8-GPU nodes
// (kwok: no container runs, so this is llmgw's and the control plane's time, not an engine's), then a
// 10x burst (BURST models from 1 replica to 10). Each replica's time runs from its decision (the
// replica reserved) to its pod Ready (the replica ready); on the simulated cluster, to its ready with no
// start delay. Needs scripts/kubernetes.sh build.
// Reproduce: npm run bench -- kubernetes [--models 200] [--nodes 50] [--burst 20]
import { parseArgs } from 'node:util';
import { FAST } from '../../test/support/cluster.ts';
import { kubernetesMissing, LLMGW_NAMESPACE, startKubernetes } from '../../test/support/kubernetes.ts';
import { eventually, type Stack, startStack } from '../../test/support/stack.ts';

const { values } = parseArgs({
  options: {
    models: { type: 'string', default: '200' },
    nodes: { type: 'string', default: '50' },
    burst: { type: 'string', default: '20' },
  },
});
const MODELS = Number(values.models);
const NODES = Number(values.nodes);
const BURST = Number(values.burst);
if (MODELS + BURST * 9 > NODES * 8) {
  console.error(
    `--models ${MODELS} + a burst of ${BURST} models to 10 replicas do not fit ${NODES} nodes of 8 GPUs`,
  );
  process.exit(2);
}
const missing = kubernetesMissing();
if (missing) {
  console.error(missing);
  process.exit(2);
}
const progress = (line: string) => process.stderr.write(`${line}\n`);
const nodeNames = Array.from({ length: NODES }, (_, i) => `k${String(i).padStart(3, '0')}`);
const ENV = { ...FAST, LLMGW_RESYNC_S: '5', LLMGW_SIM_START_DELAY_MS: '0', LLMGW_LOAD_STALE_S: '600' };

/** Decision-to-ready times (ms) of the ready replicas of the models named, p50 and p99. */
async function readyTimes(stack: Stack, prefix: string, after: Date) {
  const rows = await stack.sql<{ ms: number }[]>`
    select extract(epoch from (updated_at - created_at)) * 1000 as ms from replicas
    where model like ${`${prefix}%`} and state = 'ready' and created_at >= ${after}`;
  const sorted = rows.map((row) => Number(row.ms)).sort((a, b) => a - b);
  const at = (q: number) =>
    Math.round(sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN);
  return { n: sorted.length, p50: at(0.5), p99: at(0.99) };
}

async function run(stack: Stack, label: string) {
  const names = Array.from({ length: MODELS }, (_, i) => `m-${String(i).padStart(4, '0')}`);
  const profile = {
    name: 'h100',
    priority: 1,
    resources: { gpus: 1 },
    gpu_model: 'H100',
    default_concurrency: 1,
  };
  let since = new Date();
  for (let i = 0; i < names.length; i += 20) {
    await Promise.all(
      names.slice(i, i + 20).map((name) =>
        stack.call('PUT', `/api/v1/models/${name}`, {
          min_replicas: 1,
          max_replicas: 10,
          profiles: [profile],
        }),
      ),
    );
  }
  const ready = async (n: number, what: string) =>
    eventually(
      what,
      async () => {
        const [{ count }] = await stack.sql<{ count: number }[]>`
          select count(*)::int as count from replicas where state = 'ready'`;
        progress(`${label}: ${what}: ${count}/${n}`);
        return count >= n;
      },
      900_000,
    );
  const started = Date.now();
  await ready(MODELS, 'first replicas ready');
  const firstS = (Date.now() - started) / 1000;
  const first = await readyTimes(stack, 'm-', since);
  since = new Date();
  const burstStarted = Date.now();
  await Promise.all(
    names.slice(0, BURST).map((name) => stack.call('POST', `/api/v1/models/${name}/load`, { in_flight: 10 })),
  );
  await ready(MODELS + BURST * 9, 'burst ready');
  const burstS = (Date.now() - burstStarted) / 1000;
  const burst = await readyTimes(stack, 'm-', since);
  return { first, firstS, burst, burstS };
}

// On Kubernetes.
const cluster = await startKubernetes();
let onKubernetes: Awaited<ReturnType<typeof run>>;
try {
  for (let i = 0; i < nodeNames.length; i += 10) {
    await cluster.addGpuNodes(nodeNames.slice(i, i + 10), 8, { 'nvidia.com/gpu.product': 'H100' });
  }
  const stack = await startStack({
    worker: true,
    env: { ...ENV, LLMGW_KUBERNETES: cluster.kubeconfig, LLMGW_KUBERNETES_NAMESPACE: LLMGW_NAMESPACE },
  });
  try {
    await eventually(
      'the cluster nodes in llmgw',
      async () => {
        const [{ count }] = await stack.sql<{ count: number }[]>`select count(*)::int as count from nodes`;
        return count === NODES;
      },
      60_000,
    );
    onKubernetes = await run(stack, 'kubernetes');
  } finally {
    await stack.stop();
  }
} finally {
  await cluster.stop();
}

// The same on the simulated cluster.
const simStack = await startStack({
  worker: true,
  env: ENV,
  nodes: nodeNames.map((name) => ({
    name,
    capacity: { gpus: 8, cores: 64, memory_gib: 512 },
    gpu_model: 'H100',
    labels: {},
  })),
});
let onSim: Awaited<ReturnType<typeof run>>;
try {
  onSim = await run(simStack, 'sim');
} finally {
  await simStack.stop();
}

console.log(`\n${MODELS} models on ${NODES} nodes of 8 GPUs, then ${BURST} models 1 -> 10 replicas`);
console.log('cluster      phase   replicas  all ready (s)  decision->ready p50 (ms)  p99 (ms)');
for (const [name, result] of [
  ['kubernetes', onKubernetes],
  ['simulated', onSim],
] as const) {
  console.log(
    `${name.padEnd(12)} first   ${String(result.first.n).padStart(8)}  ${result.firstS.toFixed(1).padStart(13)}  ${String(result.first.p50).padStart(24)}  ${String(result.first.p99).padStart(8)}`,
  );
  console.log(
    `${name.padEnd(12)} burst   ${String(result.burst.n).padStart(8)}  ${result.burstS.toFixed(1).padStart(13)}  ${String(result.burst.p50).padStart(24)}  ${String(result.burst.p99).padStart(8)}`,
  );
}
console.log(
  `RESULT kubernetes models=${MODELS} nodes=${NODES} first_p50_ms=${onKubernetes.first.p50} first_p99_ms=${onKubernetes.first.p99} ` +
    `burst_p50_ms=${onKubernetes.burst.p50} burst_p99_ms=${onKubernetes.burst.p99} ` +
    `sim_first_p50_ms=${onSim.first.p50} sim_first_p99_ms=${onSim.first.p99} sim_burst_p50_ms=${onSim.burst.p50} sim_burst_p99_ms=${onSim.burst.p99}`,
);
process.exit(0);
