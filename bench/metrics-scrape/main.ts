// GET /metrics at scale: many models in the store, scrapes that come together. Each scrape either
// reads the store itself (LLMGW_METRICS_REFRESH_S=0) or serves the figures one read shared by all
// scrapers took (the default, 5 s); /readyz is timed while the scrapes run. State is written to the
// store directly (no worker); the scrapers run in a process of their own (scrapers.ts), as Prometheus.
// The same load on GET /healthz, which reads nothing, shows what any request costs on the machine now.
// Reproduce: npm run bench -- metrics-scrape [--models 1000] [--scrapers 20] [--rounds 10]
import { execFile } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { startApi } from '../../src/cli/serve.ts';
import { temporalReconcilers } from '../../src/reconcilers/client.ts';
import type { Sql } from '../../src/store/db.ts';
import { putModel } from '../../src/store/models.ts';
import { putQuota } from '../../src/store/quotas.ts';
import { createScope } from '../../src/store/tenancy.ts';
import { startStack } from '../../test/support/stack.ts';

const { values } = parseArgs({
  options: {
    models: { type: 'string', default: '1000' },
    scrapers: { type: 'string', default: '20' },
    rounds: { type: 'string', default: '10' },
  },
});
const models = Number(values.models);
const scrapers = Number(values.scrapers);
const rounds = Number(values.rounds);
const TEAMS = 10;
const NODES = 16;

/** One org, its teams with quotas, nodes, and `models` models spread over the teams, each with a ready replica and a decision. */
async function seed(sql: Sql) {
  await createScope(sql, 'org', 'o-bench', 'Bench', null);
  for (let t = 0; t < TEAMS; t++) {
    await createScope(sql, 'team', `t-${t}`, `team-${t}`, 'o-bench');
    await putQuota(sql, { scope: `team:t-${t}`, guarantee: { gpus: 8 }, limit: { gpus: 64 } }, 'bench');
  }
  for (let n = 0; n < NODES; n++) {
    await sql`insert into nodes (name, capacity, gpu_model, labels, state)
      values (${`gpu-${n}`}, ${sql.json({ gpus: 1000, cores: 10000, memory_gib: 100000 })}, 'H100', '{}', 'ready')`;
  }
  for (let i = 0; i < models; i++) {
    const name = `m-${i}`;
    await putModel(sql, {
      name,
      owner: `team:t-${i % TEAMS}`,
      min_replicas: 1,
      max_replicas: 4,
      profiles: [
        { name: 'h100', priority: 1, resources: { gpus: 1, cores: 8, memory_gib: 64 }, gpu_model: 'H100' },
      ],
    });
    await sql`insert into replicas (id, model, profile, node, resources, state)
      values (${`r-${i}`}, ${name}, 'h100', ${`gpu-${i % NODES}`}, ${sql.json({ gpus: 1, cores: 8, memory_gib: 64 })}, 'ready')`;
    await sql`insert into decisions (model, action, reason, inputs)
      values (${name}, 'none', 'steady: bench', ${sql.json({ replicas: 1 })})`;
  }
}

const SCRAPERS = fileURLToPath(new URL('./scrapers.ts', import.meta.url));

/**
 * `rounds` times: `scrapers` scrapes at once, and one /readyz while they run (scrapers.ts); and the
 * time this process (the API's) was busy meanwhile, per scrape, which other load on the machine
 * changes less than the latencies.
 */
async function measure(base: string, path: string, token: string) {
  const argv = ['--import', 'tsx', SCRAPERS, base, path, token, String(scrapers), String(rounds)];
  const before = performance.eventLoopUtilization();
  const { stdout } = await promisify(execFile)(process.execPath, argv, { maxBuffer: 16 * 1024 * 1024 });
  const busy = performance.eventLoopUtilization(before);
  const { scrapes, readyz } = JSON.parse(stdout) as { scrapes: number[]; readyz: number[] };
  // The warm-up scrape counts too: its read of the store is part of the work.
  return { scrapes, readyz, busyPerScrape: busy.active / (scrapes.length + 1) };
}

const quantile = (samples: number[], q: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]);
};

const stack = await startStack({ env: { LLMGW_METRICS_REFRESH_S: '5' } });
process.stderr.write(`seeding ${models} models ...\n`);
await seed(stack.sql);
// Their reconcilers run (idle: no worker), as /readyz and llmgw_reconcilers_missing expect them to.
await temporalReconcilers(stack.temporal, stack.config.taskQueue).ensure(
  Array.from({ length: models }, (_, i) => `m-${i}`),
);
// The same store behind an API whose every scrape reads it, as before the figures were shared.
const perScrape = await startApi({
  config: { ...stack.config, metricsRefreshMs: 0 },
  sql: stack.sql,
  temporalAddress: stack.temporalAddress,
  port: 0,
  log: { warn() {}, error: console.error },
});
const results = {
  shared: await measure(stack.url, '/metrics', stack.metricsToken),
  per_scrape: await measure(perScrape.url, '/metrics', stack.metricsToken),
  'healthz (floor)': await measure(stack.url, '/healthz', stack.metricsToken),
};
await perScrape.stop();
await stack.stop();

const row = (...cells: string[]) => console.log(cells.map((c, i) => c.padEnd(i === 0 ? 26 : 14)).join(''));
console.log(`\nGET /metrics: ${models} models, ${scrapers} scrapes at once x ${rounds} rounds (ms)`);
row('figures', 'scrape p50', 'scrape p99', 'readyz p50', 'readyz max', 'API busy/scrape');
for (const [name, { scrapes, readyz, busyPerScrape }] of Object.entries(results)) {
  row(
    name,
    ...[quantile(scrapes, 0.5), quantile(scrapes, 0.99), quantile(readyz, 0.5), quantile(readyz, 1)].map(
      String,
    ),
    busyPerScrape.toFixed(1),
  );
}
row(
  'reproduce',
  `npm run bench -- metrics-scrape --models ${models} --scrapers ${scrapers} --rounds ${rounds}`,
);
const { shared, per_scrape, 'healthz (floor)': floor } = results;
console.log(
  `RESULT metrics-scrape models=${models} scrapers=${scrapers} p50_ms=${quantile(shared.scrapes, 0.5)} p99_ms=${quantile(shared.scrapes, 0.99)} readyz_p50_ms=${quantile(shared.readyz, 0.5)} readyz_max_ms=${quantile(shared.readyz, 1)} busy_ms_per_scrape=${shared.busyPerScrape.toFixed(1)} per_scrape_p50_ms=${quantile(per_scrape.scrapes, 0.5)} per_scrape_p99_ms=${quantile(per_scrape.scrapes, 0.99)} per_scrape_busy_ms_per_scrape=${per_scrape.busyPerScrape.toFixed(1)} healthz_p50_ms=${quantile(floor.scrapes, 0.5)}`,
);
