// Records the history of a real reconciler as a replay fixture (test/fixtures/histories/NAME.pb), for
// test/unit/workflows/reconciler-replay.test.ts. Run it when the workflow changes on purpose (the change
// guarded by patched() for the reconcilers already running), and keep the fixtures an open run could
// still have (docs/architecture.md "Retiring history compatibility").
//   npm run record-history -- NAME
// A model starts with one replica, bursts to 8 on a load step, and resyncs; its history is then saved.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import proto from '@temporalio/proto';
import { reconcilerId } from '../src/workflows/messages.ts';
import { stopOwnServices } from '../test/support/services.ts';
import { eventually, startStack } from '../test/support/stack.ts';

const name = process.argv[2];
if (!name || !/^[a-z0-9-]+$/.test(name)) {
  console.error('usage: npm run record-history -- NAME (lower-case letters, digits and dashes)');
  process.exit(2);
}
const file = join(import.meta.dirname, '..', 'test', 'fixtures', 'histories', `${name}.pb`);
const progress = (line: string) => process.stderr.write(`record-history: ${line}\n`);

progress('starting Postgres, Temporal, the API and a worker');
const stack = await startStack({
  worker: true,
  env: { LLMGW_RESYNC_S: '1', LLMGW_SIM_START_DELAY_MS: '100' },
  nodes: [{ name: 'g1', capacity: { gpus: 8, cores: 64, memory_gib: 512 }, gpu_model: null, labels: {} }],
});
try {
  const model = 'recorded';
  const active = async () =>
    (await stack.sql`select 1 from replicas where model = ${model} and state = 'ready'`).length;
  await stack.call('PUT', `/api/v1/models/${model}`, {
    min_replicas: 1,
    max_replicas: 8,
    profiles: [{ name: 'g1', priority: 1, resources: { gpus: 1 }, default_concurrency: 10 }],
  });
  await eventually('the first replica is ready', async () => (await active()) === 1, 60_000);
  progress('one replica ready; stepping the load to 80 in flight');
  await stack.call('POST', `/api/v1/models/${model}/load`, { in_flight: 80 });
  await eventually('the burst is ready', async () => (await active()) === 8, 60_000);
  progress('eight replicas ready; letting it resync twice');
  await new Promise((resolve) => setTimeout(resolve, 2_500));
  const history = await stack.temporal.workflow.getHandle(reconcilerId(model)).fetchHistory();
  writeFileSync(file, proto.temporal.api.history.v1.History.encode(history).finish());
  progress(`wrote ${file} (${history.events?.length ?? 0} events)`);
} finally {
  await stack.stop();
  await stopOwnServices();
}
