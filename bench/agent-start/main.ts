// Agent start: from a place decision (its reservation committed) to the replica ready, with the sim
// engine as a process, over 20 replicas on 3 `llmgw agent` processes, through the real API, Temporal
// dev server, worker and Postgres. What llmgw adds on top of the engine's own start is split out: the
// dispatch (reservation -> engine spawned on its node, exact) and the rest (spawn -> ready recorded,
// less the engine's own start, measured alone under the same burst of 20); and each start split at its
// steps, from its replicaOnNode workflow's history and its agent's files (stagesOf).
// Reproduce: npm run bench -- agent-start [--replicas 20]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { temporal } from '@temporalio/proto';
import { answersReady } from '../../src/agent/readiness.ts';
import { replicaOnNodeId } from '../../src/domain/node-work.ts';
import { agentGrant, engineRecords, killEngines, spawnAgent } from '../../test/support/agents.ts';
import { eventually, startStack } from '../../test/support/stack.ts';

const { values } = parseArgs({ options: { replicas: { type: 'string', default: '20' } } });
const count = Number(values.replicas);
const NODES = ['bench-a', 'bench-b', 'bench-c'];
const work = mkdtempSync(join(tmpdir(), 'llmgw-agent-start-'));
const percentile = (samples: number[], q: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)];
};

/** The sim engine's own start, alone: `count` spawned at once, each timed to its first /health 200. */
async function engineAlone(): Promise<number[]> {
  const freePort = () =>
    new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
  const ports = await Promise.all(Array.from({ length: count }, freePort));
  return Promise.all(
    ports.map(async (port, i) => {
      const began = performance.now();
      const child = spawn(
        process.execPath,
        ['bin/llmgw.mjs', 'sim-engine', '--port', String(port), '--replica', `alone-${i}`],
        {
          stdio: 'ignore',
          detached: true,
        },
      );
      // The agent's own check, which looks whether the port listens before it asks over HTTP: a
      // refused fetch every 5 ms for each of 20 engines would slow what it measures.
      while (!(await answersReady(`http://127.0.0.1:${port}`))) {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      const took = performance.now() - began;
      process.kill(-child.pid!, 'SIGKILL');
      return took;
    }),
  );
}

const ms = (event: temporal.api.history.v1.IHistoryEvent) =>
  Number(event.eventTime?.seconds?.toString()) * 1000 + (event.eventTime?.nanos ?? 0) / 1e6;

/**
 * Each replica's start split at the points its replicaOnNode workflow's history, the agent's engine
 * log and engines.json time: reservation -> workflow started (the reconciler's start activity) -> its
 * first workflow task taken by the worker (at once when it starts eagerly) -> engine activity
 * scheduled -> taken from the node's task queue -> the agent's spawn called (the first line of the
 * engine's log) -> spawned -> the agent's start answered (the engine's own start and the readiness
 * poll) -> ready recorded (the workflow's next task and the settle activity).
 */
async function stagesOf(
  rows: { id: string; node: string; created_at: Date; updated_at: Date }[],
  spawned: Map<string, number>,
) {
  const stages: Record<string, number[]> = {
    'reservation -> workflow started': [],
    'workflow started -> its first task taken': [],
    'first task taken -> engine activity scheduled': [],
    'scheduled -> taken by the agent': [],
    'taken -> spawn called (its log line)': [],
    'spawn called -> spawned': [],
    'spawned -> start answered (engine + readiness)': [],
    'answered -> ready recorded': [],
  };
  const [toStarted, toFirstTask, toScheduled, toTaken, toCalled, toSpawned, toAnswered, toRecorded] =
    Object.values(stages);
  for (const r of rows) {
    const history = await stack.temporal.workflow.getHandle(replicaOnNodeId('start', r.id)).fetchHistory();
    const events = history.events ?? [];
    const scheduled = events.findIndex((e) => e.activityTaskScheduledEventAttributes);
    const taken = events.find((e, i) => i > scheduled && e.activityTaskStartedEventAttributes);
    const answered = events.find((e, i) => i > scheduled && e.activityTaskCompletedEventAttributes);
    if (scheduled < 0 || !taken || !answered) continue;
    toStarted.push(ms(events[0]) - r.created_at.getTime());
    const firstTask = events.find((e) => e.workflowTaskStartedEventAttributes)!;
    toFirstTask.push(ms(firstTask) - ms(events[0]));
    toScheduled.push(ms(events[scheduled]) - ms(firstTask));
    toTaken.push(ms(taken) - ms(events[scheduled]));
    // The supervisor's first line of the engine's log, written just before it spawns the engine.
    const line = readFileSync(join(work, r.node, 'logs', `${r.id}.log`), 'utf8').split('\n')[0];
    const called = Date.parse(/ at (\S+):/.exec(line)?.[1] ?? '');
    toCalled.push(called - ms(taken));
    toSpawned.push(spawned.get(r.id)! - called);
    toAnswered.push(ms(answered) - spawned.get(r.id)!);
    toRecorded.push(r.updated_at.getTime() - ms(answered));
  }
  return stages;
}

const alone = await engineAlone();
const stack = await startStack({
  worker: true,
  env: { LLMGW_RESYNC_S: '30', LLMGW_SCALE_DOWN_WINDOW_S: '600' },
});
const agents: ReturnType<typeof spawnAgent>[] = [];
try {
  for (const node of NODES) {
    const token = await stack.token(agentGrant(node));
    agents.push(spawnAgent(stack, node, token, join(work, node), 'gpus=8,cores=96,memory_gib=1024'));
  }
  await eventually(
    'three agents registered',
    async () => {
      const nodes = (await stack.call('GET', '/api/v1/nodes')).body as { driver: string }[];
      return nodes.filter((n) => n.driver === 'agent').length === 3;
    },
    60_000,
  );
  const put = await stack.call('PUT', '/api/v1/models/bench-start', {
    min_replicas: count,
    max_replicas: count,
    profiles: [
      { name: 'h100', priority: 1, resources: { gpus: 1 }, gpu_model: 'H100', engine: { kind: 'sim' } },
    ],
  });
  if (put.status >= 300) throw new Error(JSON.stringify(put.body));
  const rows = await eventually(
    `${count} replicas ready`,
    async () => {
      const ready = await stack.sql<{ id: string; created_at: Date; updated_at: Date; node: string }[]>`
      select id, created_at, updated_at, node from replicas where model = 'bench-start' and state = 'ready'`;
      return ready.length === count ? ready : undefined;
    },
    180_000,
  );
  const spawned = new Map(
    NODES.flatMap((node) =>
      engineRecords(join(work, node)).map((r) => [r.replica, Date.parse(r.started_at)]),
    ),
  );
  const total = rows.map((r) => r.updated_at.getTime() - r.created_at.getTime());
  const dispatch = rows.map((r) => spawned.get(r.id)! - r.created_at.getTime());
  const aloneP50 = percentile(alone, 0.5);
  // Per replica: everything but the engine's own start (its median alone under the same burst).
  const added = total.map((t) => t - aloneP50);
  const share = added.reduce((a, b) => a + b, 0) / total.reduce((a, b) => a + b, 0);
  const stages = await stagesOf(rows, spawned);
  const row = (k: string, v: string) => console.log(`${k.padEnd(50)} ${v}`);
  console.log('\nagent start: place decision (reservation committed) -> replica ready');
  row('replicas x agents', `${count} x ${NODES.length}`);
  row(
    'total p50 / p99 (ms)',
    `${Math.round(percentile(total, 0.5))} / ${Math.round(percentile(total, 0.99))}`,
  );
  row('engine alone p50 / p99 (ms)', `${Math.round(aloneP50)} / ${Math.round(percentile(alone, 0.99))}`);
  row(
    'dispatch to the node p50 / p99 (ms)',
    `${Math.round(percentile(dispatch, 0.5))} / ${Math.round(percentile(dispatch, 0.99))}`,
  );
  row(
    'llmgw adds p50 / p99 (ms)',
    `${Math.round(percentile(added, 0.5))} / ${Math.round(percentile(added, 0.99))}`,
  );
  row('share outside the engine start', `${(share * 100).toFixed(1)}%`);
  console.log('\nwhere it goes, per replica, p50 / p99 (ms)');
  for (const [name, samples] of Object.entries(stages)) {
    row(`  ${name}`, `${Math.round(percentile(samples, 0.5))} / ${Math.round(percentile(samples, 0.99))}`);
  }
  console.log(
    `RESULT agent-start replicas=${count} agents=${NODES.length} p50_ms=${Math.round(percentile(total, 0.5))} p99_ms=${Math.round(percentile(total, 0.99))} engine_p50_ms=${Math.round(aloneP50)} dispatch_p99_ms=${Math.round(percentile(dispatch, 0.99))} added_p99_ms=${Math.round(percentile(added, 0.99))} outside_share=${share.toFixed(3)}`,
  );
} finally {
  for (const agent of agents) agent.child.kill('SIGKILL');
  for (const node of NODES) killEngines(join(work, node));
  await stack.stop();
  rmSync(work, { recursive: true, force: true });
  process.exit(0);
}
