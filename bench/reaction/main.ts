// Reaction time of the reconcilers: from a load report that crosses a model's capacity at SLO to the
// new replica placed (its reservation committed), through the real API, Temporal dev server, worker
// and Postgres. Reproduce: npm run bench -- reaction [--models 20] [--rounds 5]
import { parseArgs } from 'node:util';
import { eventually, startStack } from '../../test/support/stack.ts';

const { values } = parseArgs({
  options: { models: { type: 'string', default: '20' }, rounds: { type: 'string', default: '5' } },
});
const models = Number(values.models);
const rounds = Number(values.rounds);

const stack = await startStack({
  worker: true,
  // The resync timer (30 s) is far above what is measured: only the load signal can explain a fast reaction.
  env: { LLMGW_RESYNC_S: '30', LLMGW_SIM_START_DELAY_MS: '100', LLMGW_SCALE_DOWN_WINDOW_S: '600' },
  nodes: Array.from({ length: 8 }, (_, i) => ({
    name: `gpu-${i + 1}`,
    capacity: { gpus: 64, cores: 512, memory_gib: 4096 },
    gpu_model: 'H100',
    labels: {},
  })),
});

const call = async (method: string, path: string, body?: unknown) => {
  const answer = await stack.call(method, path, body);
  if (answer.status >= 300)
    throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
};
// Watched in the store directly: polling the API would load the machine that is being measured.
const placedAt = async (model: string) =>
  (
    await stack.sql<{ created_at: Date }[]>`
      select created_at from replicas where model = ${model} and state not in ('stopped', 'failed') order by created_at`
  ).map((row) => row.created_at.getTime());

const names = Array.from({ length: models }, (_, i) => `react-${i}`);
for (const name of names) {
  await call('PUT', `/api/v1/models/${name}`, {
    min_replicas: 1,
    max_replicas: rounds + 1,
    profiles: [
      { name: 'h100', priority: 1, resources: { gpus: 1 }, gpu_model: 'H100', default_concurrency: 10 },
    ],
  });
}
for (const name of names)
  await eventually(`${name} placed`, async () => (await placedAt(name)).length === 1, 60_000);

const samples: number[] = [];
for (let round = 1; round <= rounds; round++) {
  // Capacity is 10 per replica: 10 * round + 1 in flight crosses it by one request.
  await Promise.all(
    names.map(async (name) => {
      const sent = Date.now();
      await call('POST', `/api/v1/models/${name}/load`, { in_flight: 10 * round + 1 });
      const placed = await eventually(
        `${name} reacts`,
        async () => {
          const times = await placedAt(name);
          return times.length === round + 1 ? times.at(-1) : undefined;
        },
        60_000,
      );
      samples.push(placed - sent);
    }),
  );
  process.stderr.write(`round ${round}/${rounds}: ${names.length} models reacted\n`);
}
await stack.stop();

samples.sort((a, b) => a - b);
const at = (q: number) => samples[Math.min(samples.length - 1, Math.ceil(q * samples.length) - 1)];
const row = (k: string, v: string) => console.log(`${k.padEnd(28)} ${v}`);
console.log('\nreaction time: load report crossing capacity -> replica placed');
row('models x rounds', `${models} x ${rounds} = ${samples.length} reactions`);
row('p50 (ms)', String(at(0.5)));
row('p90 (ms)', String(at(0.9)));
row('p99 (ms)', String(at(0.99)));
row('max (ms)', String(samples.at(-1)));
row('reproduce', `npm run bench -- reaction --models ${models} --rounds ${rounds}`);
console.log(
  `RESULT reaction models=${models} rounds=${rounds} p50_ms=${at(0.5)} p99_ms=${at(0.99)} max_ms=${samples.at(-1)}`,
);
