// The console's pages at scale: each answers in under 100 ms with 200 models, 50 scopes and 100 nodes.
// State is written to the store directly (no worker): every model has replicas, a measurement and a
// decision every three minutes of the last hour (its sparkline). Each page is fetched as a browser
// signed in as the admin fetches it (all of it in view), one at a time, after a warm-up.
// Reproduce: npm run bench -- console [--models 200] [--nodes 100] [--rounds 30]
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import type { Sql } from '../../src/store/db.ts';
import { putMeasurement } from '../../src/store/measurements.ts';
import { putModel } from '../../src/store/models.ts';
import { putQuota } from '../../src/store/quotas.ts';
import { createScope } from '../../src/store/tenancy.ts';
import { startStack } from '../../test/support/stack.ts';

const { values } = parseArgs({
  options: {
    models: { type: 'string', default: '200' },
    nodes: { type: 'string', default: '100' },
    rounds: { type: 'string', default: '30' },
  },
});
const models = Number(values.models);
const nodes = Number(values.nodes);
const rounds = Number(values.rounds);
/** 1 org, 7 teams and 6 projects in each: 50 scopes, every one with a quota. */
const TEAMS = 7;
const PROJECTS_PER_TEAM = 6;
const SCOPES = 1 + TEAMS + TEAMS * PROJECTS_PER_TEAM;
const BUDGET_MS = 100;

async function seed(sql: Sql) {
  await createScope(sql, 'org', 'o-bench', 'Bench', null);
  await putQuota(sql, { scope: 'org:o-bench', guarantee: { gpus: 400 }, limit: { gpus: 800 } }, 'bench');
  const projects: string[] = [];
  for (let t = 0; t < TEAMS; t++) {
    await createScope(sql, 'team', `t-${t}`, `team-${t}`, 'o-bench');
    await putQuota(sql, { scope: `team:t-${t}`, guarantee: { gpus: 48 }, limit: { gpus: 96 } }, 'bench');
    for (let p = 0; p < PROJECTS_PER_TEAM; p++) {
      const id = `p-${t}-${p}`;
      await createScope(sql, 'project', id, `project-${p}`, `t-${t}`);
      await putQuota(sql, { scope: `project:${id}`, guarantee: { gpus: 8 }, limit: { gpus: 16 } }, 'bench');
      projects.push(id);
    }
  }
  for (let n = 0; n < nodes; n++) {
    await sql`insert into nodes (name, capacity, gpu_model, labels, state)
      values (${`gpu-${n}`}, ${sql.json({ gpus: 8, cores: 96, memory_gib: 1024 })}, 'H100', '{}', 'ready')`;
  }
  const hourAgo = Date.now() - 3600_000;
  for (let i = 0; i < models; i++) {
    const name = `m-${i}`;
    await putModel(sql, {
      name,
      owner: `project:${projects[i % projects.length]}`,
      min_replicas: 1,
      max_replicas: 4,
      profiles: [
        { name: 'h100', priority: 1, resources: { gpus: 1, cores: 8, memory_gib: 64 }, gpu_model: 'H100' },
      ],
    });
    await putMeasurement(sql, {
      model: name,
      profile: 'h100',
      max_concurrency_at_slo: 16,
      throughput_tok_per_sec: 2000,
      slo: { ttft_p95_ms: 500 },
      measured_at: new Date().toISOString(),
    });
    for (let r = 0; r < 2; r++) {
      await sql`insert into replicas (id, model, profile, node, resources, state)
        values (${`r-${i}-${r}`}, ${name}, 'h100', ${`gpu-${(2 * i + r) % nodes}`},
          ${sql.json({ gpus: 1, cores: 8, memory_gib: 64 })}, 'ready')`;
    }
    for (let d = 0; d < 20; d++) {
      const inFlight = 10 + ((i + d * 7) % 25);
      await sql`insert into decisions (model, at, action, reason, inputs)
        values (${name}, ${new Date(hourAgo + d * 180_000)}, 'none', ${`steady: ${inFlight} in flight <= 32 at SLO on 2 replicas`},
          ${sql.json({ in_flight: inFlight, capacity_at_slo: 32, replicas: 2, pending: null })})`;
    }
  }
}

const quantile = (samples: number[], q: number) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
};

const stack = await startStack();
process.stderr.write(`seeding ${models} models, ${SCOPES} scopes, ${nodes} nodes ...\n`);
await seed(stack.sql);

/** Signed in as a browser is: the session cookie the sign-in form sets for `token`. */
async function sessionCookie(token: string) {
  const signIn = await fetch(`${stack.url}/ui/sign-in`, {
    method: 'POST',
    body: new URLSearchParams({ token }),
    headers: { origin: stack.url },
    redirect: 'manual',
  });
  const cookie = (signIn.headers.get('set-cookie') ?? '').split(';')[0]!;
  if (signIn.status !== 303 || !cookie) throw new Error(`sign-in answered ${signIn.status}`);
  return cookie;
}
const cookie = await sessionCookie(stack.adminToken);
// A team's viewer sees a seventh of the models: what its Models page costs beside the admin's.
const teamCookie = await sessionCookie(
  await stack.token({ name: 'bench-team-viewer', role: 'viewer', scope: 'team:Bench/team-3' }),
);

const PAGES = {
  tree: '/ui/tree',
  models: '/ui/models',
  model: '/ui/models/m-7',
  nodes: '/ui/nodes',
  quota_preview: '/ui/quota-preview?scope=team%3At-3&guarantee_gpus=4&limit_gpus=40',
  models_team: '/ui/models',
};
/** What the API alone takes for the reads of the two heaviest pages: the floor beneath them. */
const API_READS = { api_tree: '/api/v1/tree', api_models: '/api/v1/models' };
const timings: Record<string, number[]> = {};
for (const [page, path] of Object.entries({ ...PAGES, ...API_READS })) {
  const headers: Record<string, string> = path.startsWith('/ui')
    ? { cookie: page === 'models_team' ? teamCookie : cookie }
    : { authorization: `Bearer ${stack.adminToken}` };
  const once = async () => {
    const started = performance.now();
    const answer = await fetch(`${stack.url}${path}`, { headers });
    const body = await answer.text();
    if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${body.slice(0, 300)}`);
    return performance.now() - started;
  };
  await once(); // warm-up: the first answer compiles the page's code paths
  timings[page] = [];
  for (let r = 0; r < rounds; r++) timings[page].push(await once());
}
await stack.stop();

const row = (...cells: string[]) => console.log(cells.map((c, i) => c.padEnd(i === 0 ? 16 : 12)).join(''));
console.log(
  `\nconsole pages: ${models} models, ${SCOPES} scopes, ${nodes} nodes, ${rounds} rounds each (ms)`,
);
row('page', 'p50', 'p95', 'max');
for (const [page, samples] of Object.entries(timings)) {
  row(page, ...[0.5, 0.95, 1].map((q) => quantile(samples, q).toFixed(1)));
}
row('reproduce', `npm run bench -- console --models ${models} --nodes ${nodes} --rounds ${rounds}`);
const worstP95 = Math.max(...Object.keys(PAGES).map((page) => quantile(timings[page]!, 0.95)));
const figures = Object.entries(timings)
  .map(
    ([page, samples]) =>
      `${page}_p50_ms=${quantile(samples, 0.5).toFixed(1)} ${page}_p95_ms=${quantile(samples, 0.95).toFixed(1)}`,
  )
  .join(' ');
console.log(
  `RESULT console models=${models} scopes=${SCOPES} nodes=${nodes} ${figures} worst_p95_ms=${worstP95.toFixed(1)} under_${BUDGET_MS}_ms=${worstP95 < BUDGET_MS}`,
);
