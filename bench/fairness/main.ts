// Fair shares from the first placement (issue 35): N models of min_replicas 2 arrive together under a
// team limited to N GPUs (--share 1.5: 1.5 N), through the real API, Temporal, worker and Postgres, on
// nodes with room for all of them (the limit is what they compete for). Fair is one replica each, and
// with a larger share the rest of the limit's room in second replicas. Measured: the time from the limit
// opening to every model serving a ready replica and the limit full of ready ones, nothing on its way or
// draining, and the preemptions it took.
// Reproduce: npm run bench -- fairness [--models 60,200] [--share 1]
//
// "Together": the models are created while the team's limit is 0, so that every one is in the store,
// waiting on the limit, when placement starts; then the limit is raised to N GPUs at once. (A model
// created after its siblings placed finds the room taken and preempts by the claims, as it should.)
import { parseArgs } from 'node:util';
import { type Services, startServices } from '../../test/support/services.ts';
import { eventually, startStack } from '../../test/support/stack.ts';

const { values } = parseArgs({
  options: { models: { type: 'string', default: '60,200' }, share: { type: 'string', default: '1' } },
});
const sizes = values.models.split(',').map(Number);
/** GPUs of the limit per model: 1 is one replica each; 1.5, two for half of them. */
const share = Number(values.share);
if (sizes.some((n) => !Number.isInteger(n) || n < 2) || !(share >= 1 && share <= 2)) {
  console.error('usage: npm run bench -- fairness [--models N[,N...] (each 2 or more)] [--share 1 to 2]');
  process.exit(2);
}
const ENV = { LLMGW_RESYNC_S: '30', LLMGW_SIM_START_DELAY_MS: '300', LLMGW_SCALE_DOWN_WINDOW_S: '600' };
const TIMEOUT_MS = 600_000;
const progress = (line: string) => process.stderr.write(`${line}\n`);

interface Outcome {
  models: number;
  fairMs: number;
  preemptions: number;
  /** Models that were ever given a second replica: each is room a sibling had to preempt back. */
  doubled: number;
}

async function run(services: Services, models: number): Promise<Outcome> {
  const nodes = Math.ceil((2 * models) / 8) + 2;
  const stack = await startStack({
    services,
    env: ENV,
    worker: true,
    nodes: Array.from({ length: nodes }, (_, i) => ({
      name: `g${i}`,
      capacity: { gpus: 8, cores: 64, memory_gib: 1024 },
      gpu_model: 'H100',
      labels: {},
    })),
  });
  try {
    const call = async (method: string, path: string, body?: unknown) => {
      const answer = await stack.call(method, path, body);
      if (answer.status >= 300)
        throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body;
    };
    await call('POST', '/api/v1/orgs', { name: 'Fair' });
    const team = `team:${(await call('POST', '/api/v1/teams', { org: 'Fair', name: 'shared' })).id}`;
    await call('PUT', '/api/v1/quotas', { scope: team, limit: { gpus: 0 } });
    const prefix = `f${models}-`;
    const names = Array.from({ length: models }, (_, i) => `${prefix}${String(i).padStart(4, '0')}`);
    for (let i = 0; i < names.length; i += 20) {
      await Promise.all(
        names.slice(i, i + 20).map((name) =>
          call('PUT', `/api/v1/models/${name}`, {
            owner: team,
            min_replicas: 2,
            max_replicas: 2,
            profiles: [{ name: 'h100', resources: { gpus: 1 }, gpu_model: 'H100', default_concurrency: 10 }],
          }),
        ),
      );
    }
    await eventually(
      'every model waits on the limit',
      async () => {
        const [{ n }] = await stack.sql<{ n: number }[]>`
          select count(distinct d.model)::int as n from models m cross join lateral (
            select model, inputs from decisions where model = m.name order by id desc limit 1) d
          where d.inputs->'pending' @> '[{"code": "limit"}]'`;
        progress(`${models} models: waiting on the limit ${n}/${models}`);
        return n === models;
      },
      TIMEOUT_MS,
    );

    const opened = Date.now();
    const limit = Math.floor(share * models);
    await call('PUT', '/api/v1/quotas', { scope: team, limit: { gpus: limit } });
    // Watched in the store directly: polling the API would load the machine that is being measured.
    const fairMs = await eventually(
      'fair shares',
      async () => {
        const [row] = await stack.sql<{ ready: number; replicas: number; unsettled: number }[]>`
          select count(distinct model) filter (where state = 'ready')::int as ready,
                 count(*) filter (where state = 'ready')::int as replicas,
                 count(*) filter (where state in ('pending', 'starting', 'draining'))::int as unsettled
          from replicas where model like ${`${prefix}%`} and state not in ('stopped', 'failed', 'lost')`;
        const seconds = ((Date.now() - opened) / 1000).toFixed(1);
        progress(
          `${models} models: ${row.ready} serve, ${row.unsettled} on their way or draining, ${seconds} s`,
        );
        const full = row.replicas === limit;
        return row.ready === models && full && row.unsettled === 0 && Date.now() - opened;
      },
      TIMEOUT_MS,
    );
    const [counts] = await stack.sql<{ preemptions: number; doubled: number }[]>`
      select (select count(*)::int from replicas where preempted_for is not null) as preemptions,
             (select count(*)::int from (select model from replicas where model like ${`${prefix}%`}
                group by model having count(*) > 1) twice) as doubled`;
    return { models, fairMs, ...counts };
  } finally {
    await stack.stop();
  }
}

// One Postgres and Temporal for every size: a stack given services of its own leaves them running.
const services = await startServices();
const outcomes: Outcome[] = [];
for (const models of sizes) outcomes.push(await run(services, models));
await services.stop();

const row = (k: string, v: string) => console.log(`${k.padEnd(52)} ${v}`);
console.log(`\nfairness: N models of min_replicas 2 arrive together under a limit of ${share} N GPUs`);
for (const o of outcomes) {
  row(`${o.models} models: limit opened -> fair shares, all ready (s)`, (o.fairMs / 1000).toFixed(1));
  row(`${o.models} models: preemptions`, String(o.preemptions));
  row(`${o.models} models: models ever given a second replica`, String(o.doubled));
}
row('reproduce', `npm run bench -- fairness --models ${sizes.join(',')} --share ${share}`);
console.log(
  `RESULT fairness share=${share} ${outcomes
    .map(
      (o) =>
        `fair_s_${o.models}=${(o.fairMs / 1000).toFixed(1)} preemptions_${o.models}=${o.preemptions} doubled_${o.models}=${o.doubled}`,
    )
    .join(' ')}`,
);
