import cluster from 'node:cluster';
import { availableParallelism } from 'node:os';
import type { Config } from '../config.ts';

/** A worker that died is started again after this. */
const RESTART_MS = 1000;

/**
 * V8's heap for each worker: a request leaves a few kilobytes that die young, and on two cores each
 * young collection held every request of its worker for some milliseconds. With semi-spaces of 32 MiB
 * from the start (V8 grows them from 1 to 16) they come a third less often, and an old space of
 * 128 MiB from the start spares the full collections of its first growth (docs/gateway.md "Several
 * processes").
 */
export const WORKER_HEAP_FLAGS = [
  '--min-semi-space-size=32',
  '--max-semi-space-size=32',
  '--initial-old-space-size=128',
];

/**
 * No background threads for V8's collector, when the workers have no core to spare (as many workers as
 * cores, or more): its helper threads then only compete with the other workers for a core. Each young
 * collection takes longer alone, but a worker spends less CPU a request and serves more requests a
 * second (docs/gateway.md "Several processes"). With cores to spare, V8's default stands.
 */
export const WORKER_GC_FLAGS = ['--single-threaded-gc'];

/**
 * No allocation-site pretenuring: V8 otherwise allocates straight into the old space the objects of a
 * code site whose objects mostly outlived a young collection once. A request's objects die young all
 * the same, and dead in the old space they keep the young objects they point to alive through every
 * young collection until a full one. In one worker of two, young collections then kept 2.2 MB each and
 * took 10 to 14 ms, against 0.6 to 0.9 MB and 4 to 6 ms in the other (docs/gateway.md "Several processes").
 */
export const WORKER_PRETENURING_FLAGS = ['--no-allocation-site-pretenuring'];

/** An operator's own heap size (V8 takes `-` or `_` between the words). */
const HEAP_SIZE_FLAG = /^--(?:(?:min|max)[-_]semi[-_]space[-_]size|initial[-_]old[-_]space[-_]size)(?:=|$)/;
/** An operator's own choice of the collector's threads (V8 also takes `--no-` or `--no` before a switch). */
const GC_THREADS_FLAG = /^--(?:no-?)?single[-_]threaded(?:[-_]gc)?$/;
/** An operator's own choice of pretenuring. */
const PRETENURING_FLAG = /^--(?:no-?)?allocation[-_]site[-_]pretenuring$/;

/**
 * The flags the workers run with: this process's own; WORKER_HEAP_FLAGS; WORKER_GC_FLAGS when the
 * machine has no more cores than workers (`spareCores` false); and WORKER_PRETENURING_FLAGS. Each is left
 * out when the operator set a flag of its own for it (on this process or in NODE_OPTIONS, which the
 * workers inherit): theirs then stands.
 */
export function workerExecArgv(
  execArgv: readonly string[],
  nodeOptions: string | undefined,
  spareCores: boolean,
): string[] {
  const given = [...execArgv, ...(nodeOptions ?? '').split(/\s+/)];
  const unset = (flag: RegExp) => !given.some((arg) => flag.test(arg));
  return [
    ...execArgv,
    ...(unset(HEAP_SIZE_FLAG) ? WORKER_HEAP_FLAGS : []),
    ...(!spareCores && unset(GC_THREADS_FLAG) ? WORKER_GC_FLAGS : []),
    ...(unset(PRETENURING_FLAG) ? WORKER_PRETENURING_FLAGS : []),
  ];
}

/**
 * `llmgw gateway`: this process (the primary) serves nothing itself; it runs LLMGW_GATEWAY_WORKERS
 * gateway processes (node:cluster, one by default) sharing the port, the kernel's connections dealt
 * among them, each with the flags of workerExecArgv, and starts again one that dies. Each worker is a
 * whole gateway: its routing table, health checks, prefix tree and counts are its own, as if several
 * gateways stood in front of the replicas (their load reports add up: each of several is the source
 * `gateway:<instance>-w<n>`; each sends a replica at most its share of the replica's slots). Returns
 * what stops them all.
 */
export function forkGatewayWorkers(
  config: Config,
  log: Pick<Console, 'warn'> = console,
): () => Promise<void> {
  let stopping = false;
  const start = (index: number) => {
    const worker = cluster.fork({ LLMGW_GATEWAY_WORKER_INDEX: String(index) });
    // The database URL is a secret that left this process's environment (forgetSecrets): it goes to
    // the worker over the IPC channel, not in the worker's environment.
    worker.on('message', (message: { want?: string }) => {
      if (message?.want === 'databaseUrl') worker.send({ databaseUrl: config.databaseUrl });
    });
    worker.once('exit', (code, signal) => {
      if (stopping) return;
      log.warn(`gateway worker ${index} exited (${signal ?? code}); starting it again`);
      // Not unref'd: while every worker is down, the pending restart is what keeps this process alive.
      setTimeout(() => {
        if (!stopping) start(index);
      }, RESTART_MS);
    });
  };
  const spareCores = availableParallelism() > config.gateway.workers;
  cluster.setupPrimary({ execArgv: workerExecArgv(process.execArgv, process.env.NODE_OPTIONS, spareCores) });
  for (let index = 1; index <= config.gateway.workers; index++) start(index);
  return async () => {
    stopping = true;
    const workers = Object.values(cluster.workers ?? {}).filter((w) => w !== undefined);
    await Promise.all(
      workers.map(
        (worker) =>
          new Promise<void>((resolve) => {
            if (worker.isDead()) return resolve();
            worker.once('exit', () => resolve());
            worker.kill('SIGTERM');
          }),
      ),
    );
  };
}

/** Whether this process is one of the primary's gateway workers. */
export const isGatewayWorker = () => cluster.isWorker;

/**
 * A worker's config: its database URL from the primary, and, when it is one of several, its own load
 * source name (one worker reports as the gateway). Its slot share (start.ts) divides each replica's
 * slots among the workers.
 */
export async function workerConfig(config: Config): Promise<Config> {
  const databaseUrl = await new Promise<string | undefined>((resolve) => {
    process.once('message', (message: { databaseUrl?: string }) => resolve(message.databaseUrl));
    process.send?.({ want: 'databaseUrl' });
  });
  if (config.gateway.workers === 1) return { ...config, databaseUrl };
  const index = process.env.LLMGW_GATEWAY_WORKER_INDEX ?? String(cluster.worker?.id ?? 0);
  return {
    ...config,
    databaseUrl,
    gateway: { ...config.gateway, instance: `${config.gateway.instance}-w${index}`.slice(0, 80) },
  };
}
