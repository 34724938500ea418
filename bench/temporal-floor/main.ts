// What Temporal alone costs a fan-out: N workflows that do nothing but answer a wake signal with one
// local activity (workflows.ts), each told twice, as a placement tells a reconciler twice (the quota
// change, then its replica ready). llmgw's own fan-out (bench/scale) cannot be faster than this on the
// same machine: the figure is its floor. Runs on the Temporal the tests use (LLMGW_TEST_TEMPORAL).
// Reproduce: npm run bench -- temporal-floor [--workflows 1000]
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import { newId } from '../../src/store/ids.ts';
import { sharedServices } from '../../test/support/services.ts';
import { cpuSeconds } from '../support/cpu-seconds.ts';
import type { emptyReconciler } from './workflows.ts';

const { values } = parseArgs({ options: { workflows: { type: 'string', default: '1000' } } });
const count = Number(values.workflows);
if (!Number.isInteger(count) || count < 1) {
  console.error('usage: npm run bench -- temporal-floor [--workflows N (1 or more)]');
  process.exit(2);
}
Runtime.install({ logger: new DefaultLogger('WARN') });
const services = await sharedServices();
const connection = await Connection.connect({ address: services.temporalAddress });
const client = new Client({ connection });
const taskQueue = `temporal-floor-${newId()}`;
/** Answers per workflow: the wake signals each has answered so far. */
const answered = new Map<string, number>();
const worker = await Worker.create({
  connection: await NativeConnection.connect({ address: services.temporalAddress }),
  taskQueue,
  workflowsPath: fileURLToPath(new URL('./workflows.ts', import.meta.url)),
  maxCachedWorkflows: count + 10,
  activities: {
    async touch(workflowId: string) {
      answered.set(workflowId, (answered.get(workflowId) ?? 0) + 1);
    },
  },
});
const running = worker.run();
const progress = (line: string) => process.stderr.write(`${line}\n`);

/** CPU seconds of this process (client and worker) and of Temporal. */
const cpuUsed = () =>
  cpuSeconds(['here', 'temporal'], (pid, comm) =>
    pid === process.pid ? 'here' : comm.startsWith('temporal') ? 'temporal' : undefined,
  );

const ids = Array.from({ length: count }, (_, i) => `floor-${String(i).padStart(4, '0')}`);
const tellAll = () =>
  Promise.all(
    ids.map((id) =>
      client.workflow.signalWithStart<typeof emptyReconciler, []>('emptyReconciler', {
        taskQueue,
        workflowId: id,
        args: [id],
        signal: 'wake',
      }),
    ),
  );
const allAnswered = async (round: number, from: number) => {
  for (;;) {
    const done = ids.filter((id) => (answered.get(id) ?? 0) >= round).length;
    progress(`round ${round}: ${done}/${count} after ${((Date.now() - from) / 1000).toFixed(1)} s`);
    if (done === count) return Date.now() - from;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};

// Started and told once, untimed: llmgw's reconcilers are running and warm when a fan-out begins.
await tellAll();
await allAnswered(1, Date.now());
const cpuBefore = cpuUsed();
const started = Date.now();
await tellAll();
await allAnswered(2, started);
await tellAll();
const tookMs = await allAnswered(3, started);
const cpuAfter = cpuUsed();

const rounds = 2 * count;
const perRound = (key: keyof typeof cpuAfter) => ((cpuAfter[key] - cpuBefore[key]) * 1000) / rounds;
const temporal = process.env.LLMGW_TEST_TEMPORAL === 'server' ? 'server' : 'dev';
const row = (k: string, v: string) => console.log(`${k.padEnd(52)} ${v}`);
console.log(`\ntemporal-floor: ${count} empty workflows told twice each, Temporal ${temporal}`);
row('every workflow answered both (s)', (tookMs / 1000).toFixed(1));
row('signal + workflow task rounds per second', (rounds / (tookMs / 1000)).toFixed(0));
row(
  'CPU ms per round: Temporal / client and worker',
  `${perRound('temporal').toFixed(1)} / ${perRound('here').toFixed(1)}`,
);
row('reproduce', `npm run bench -- temporal-floor --workflows ${count}`);
console.log(
  `RESULT temporal-floor workflows=${count} temporal=${temporal} fan_out_s=${(tookMs / 1000).toFixed(1)} ` +
    `rounds_per_s=${(rounds / (tookMs / 1000)).toFixed(0)} cpu_ms_per_round_temporal=${perRound('temporal').toFixed(1)} ` +
    `cpu_ms_per_round_here=${perRound('here').toFixed(1)}`,
);
await Promise.all(ids.map((id) => client.workflow.getHandle(id).terminate('benchmark over')));
worker.shutdown();
await running;
await connection.close();
await services.stop();
process.exit(0);
