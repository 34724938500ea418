// Prefix-aware routing against least-in-flight and sglang-router's cache_aware, on a workload whose
// requests share prefixes (bench/gateway-prefix/load.ts: multi-turn conversations resending their
// history, opening with one of 40 system prompts of 1,000 words) and 4 simulated engines with a
// prefix cache (30,000 tokens each, 0.25 ms per prompt token not cached), in interleaved rounds. Each
// run gets fresh engines (empty caches), WARM_UP_S of the workload on other words through the router
// first (not measured), and the round's conversations; the clients and engines run in
// processes of their own, and so does each router: llmgw's two as `llmgw gateway` processes (one worker
// each), sglang-router as its own. Prints TTFT p50/p99, the engines' prefix cache hit rate, and the largest
// share of prompt tokens one engine got (1.0: a quarter each).
// Reproduce: npm run bench -- gateway-prefix [--seconds 15] [--rounds 2] [--users 32] [--no-peers]
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startLlmgwGateway } from '../../test/support/llmgw-gateway.ts';
import { closedPort } from '../../test/support/ports.ts';
import { startStack } from '../../test/support/stack.ts';
import { quantile } from '../gateway/load-runner.ts';
import { startPeer } from '../support/peer-routers.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '15' },
    rounds: { type: 'string', default: '2' },
    users: { type: 'string', default: '32' },
    'no-peers': { type: 'boolean', default: false },
  },
});
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const ENGINES = 4;
/**
 * A system prompt's whole prefill: 1,000 words (load.ts SYSTEM_WORDS, a token each for the simulated
 * engine) at 0.25 ms each (engine.ts `prefix`). The first request of each system prompt pays it with
 * any router; so does one sent where its prompt is not cached.
 */
const WHOLE_PREFILL_MS = 1000 * 0.25;
/** A run's first second, apart in the figures: the tail of every router gathers there. */
const FIRST_SECOND_MS = 1000;
/**
 * Before each measured run, the workload on words of its own for this long through the router (load.ts):
 * the router, the engines, the clients and the key's answer are then past their first requests, as in
 * service, and the caches hold nothing the run asks for.
 */
const WARM_UP_S = 2;

async function startEngines(): Promise<{ urls: string[]; child: ChildProcess }> {
  const engine = fileURLToPath(new URL('../gateway/engine.ts', import.meta.url));
  const child = spawn(process.execPath, ['--import', 'tsx', engine, 'prefix', '5', String(ENGINES)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return { urls: JSON.parse(line.toString()).urls, child };
}

/** Each engine's prefix cache counters: prompt tokens asked for, and found. */
async function cacheCounts(urls: string[]) {
  return Promise.all(
    urls.map(async (url) => {
      const text = await (await fetch(`${url}/metrics`)).text();
      const value = (name: string) =>
        Number(new RegExp(`^${name}\\{[^}]*\\} (\\S+)$`, 'm').exec(text)?.[1] ?? 0);
      return {
        queries: value('vllm:prefix_cache_queries_total'),
        hits: value('vllm:prefix_cache_hits_total'),
      };
    }),
  );
}

/** How a gateway has chosen replicas so far, from its metrics: count per reason. */
async function selections(gateway: string): Promise<Map<string, number>> {
  const text = await (
    await fetch(`${gateway}/metrics`, { headers: { authorization: `Bearer ${stack.metricsToken}` } })
  ).text();
  return new Map(
    [...text.matchAll(/llmgw_gateway_selections_total\{model="bench",reason="(\w+)"\} (\d+)/g)].map(
      ([, reason, count]) => [reason, Number(count)],
    ),
  );
}

/** The choices of one run, `prefix=…, balanced=…`: the gateway outlives the run, its counters too. */
const choicesSince = (before: Map<string, number>, after: Map<string, number>) =>
  [...after]
    .map(([reason, count]) => [reason, count - (before.get(reason) ?? 0)] as const)
    .filter(([, count]) => count > 0)
    .map(([reason, count]) => `${reason}=${count}`)
    .join(', ');

interface Load {
  ttfts: number[];
  turns: number[];
  sent: number[];
  failed: number;
  conversations: number;
}
const stack = await startStack();
// Each of llmgw's routings in a gateway process of its own, as in production and as each peer runs:
// the bench's own process (the API the gateways report load to) takes nothing from their event loops.
const prefixGateway = await startLlmgwGateway(stack, {
  LLMGW_GATEWAY_ROUTING: 'prefix',
  LLMGW_GATEWAY_INSTANCE: 'prefix',
});
const lifGateway = await startLlmgwGateway(stack, {
  LLMGW_GATEWAY_ROUTING: 'least-in-flight',
  LLMGW_GATEWAY_INSTANCE: 'lif',
});
const results: Record<string, number> = {};
try {
  await stack.call('POST', '/api/v1/orgs', { name: 'Bench' });
  await stack.call('PUT', '/api/v1/models/bench', {
    owner: 'org:Bench',
    min_replicas: 0,
    max_replicas: ENGINES,
    profiles: [{ name: 'cpu', resources: { cores: 1 }, default_concurrency: 4096 }],
  });
  await stack.sql`insert into nodes (name, capacity, gpu_model, labels, state)
    values ('cpu-1', ${stack.sql.json({ cores: 64, memory_gib: 256 })}, null, '{}', 'ready')`;
  const key = await stack.token({ name: 'bench', role: 'client', scope: 'org:Bench' });
  const routers: [string, (urls: string[]) => Promise<{ url: string; stop(): Promise<void> }>][] = [
    ['llmgw prefix', async () => ({ url: prefixGateway.url, stop: async () => {} })],
    ['llmgw least-in-flight', async () => ({ url: lifGateway.url, stop: async () => {} })],
  ];
  if (!values['no-peers']) {
    routers.push([
      'sglang-router cache_aware',
      async (urls) => startPeer('sglang-router', await closedPort(), urls, 'cache_aware'),
    ]);
  }
  const rounds = Number(values.rounds);
  console.log(
    `${values.users} users, ${rounds} interleaved rounds of ${values.seconds} s per router, ${ENGINES} simulated engines with a prefix cache, fresh for each run and warmed for ${WARM_UP_S} s on other words`,
  );
  const runs = new Map<
    string,
    {
      ttfts: number[];
      turns: number[];
      sent: number[];
      failed: number;
      hits: number;
      queries: number;
      share: number[];
    }
  >();
  for (let round = 0; round < rounds; round++) {
    const order = [...routers.slice(round % routers.length), ...routers.slice(0, round % routers.length)];
    for (const [name, start] of order) {
      const engines = await startEngines();
      await stack.sql`delete from replicas`;
      // New names each run: what a gateway remembers of the last run's replicas is no use to these.
      for (const [i, url] of engines.urls.entries()) {
        await stack.sql`insert into replicas (id, model, profile, node, resources, state, endpoint)
          values (${`bench-${round}-${name.replace(/\W/g, '')}-${i}`}, 'bench', 'cpu', 'cpu-1',
            ${stack.sql.json({ cores: 1 })}, 'ready', ${`${url}/v1`})`;
      }
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const router = await start(engines.urls);
      // The clients warm up, then wait while the counters are read: the run counts only what follows.
      const client = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          here('./load.ts'),
          router.url,
          key,
          values.users!,
          String(WARM_UP_S),
          values.seconds!,
          String(7 + round),
        ],
        { stdio: ['pipe', 'pipe', 'inherit'] },
      );
      const lines = createInterface({ input: client.stdout! })[Symbol.asyncIterator]();
      if ((await lines.next()).done) throw new Error(`${name}: the clients exited during their warm-up`);
      const [countsBefore, chosenBefore] = await Promise.all([
        cacheCounts(engines.urls),
        name.startsWith('llmgw') ? selections(router.url) : new Map<string, number>(),
      ]);
      client.stdin!.end('go\n');
      const measured = await lines.next();
      if (measured.done) throw new Error(`${name}: the clients exited during their run`);
      const load = JSON.parse(measured.value) as Load;
      const counts = (await cacheCounts(engines.urls)).map((c, i) => ({
        queries: c.queries - countsBefore[i].queries,
        hits: c.hits - countsBefore[i].hits,
      }));
      if (name.startsWith('llmgw'))
        console.log(
          `  round ${round + 1}, ${name}: choices ${choicesSince(chosenBefore, await selections(router.url))}`,
        );
      await router.stop();
      engines.child.stdin!.end();
      const queries = counts.reduce((sum, c) => sum + c.queries, 0);
      const run = runs.get(name) ?? {
        ttfts: [],
        turns: [],
        sent: [],
        failed: 0,
        hits: 0,
        queries: 0,
        share: [],
      };
      run.ttfts.push(...load.ttfts);
      run.turns.push(...load.turns);
      run.sent.push(...load.sent);
      run.failed += load.failed;
      run.hits += counts.reduce((sum, c) => sum + c.hits, 0);
      run.queries += queries;
      run.share.push(Math.max(...counts.map((c) => c.queries)) / (queries / ENGINES));
      runs.set(name, run);
    }
  }
  console.log(
    "\n| router | TTFT p50 (ms) | TTFT p99 (ms) | TTFT p99 after a run's first second (ms) | cache hit rate | largest share | requests (failed) |",
  );
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, run] of runs) {
    const hitRate = run.hits / run.queries;
    const share = Math.max(...run.share);
    const [p50, p99] = [quantile(run.ttfts, 0.5), quantile(run.ttfts, 0.99)];
    // Past the first second: every user's first turn comes at once then, and the system prompts' first
    // requests (a whole prefill with any router).
    const steady = quantile(
      run.ttfts.filter((_, i) => run.sent[i] >= FIRST_SECOND_MS),
      0.99,
    );
    console.log(
      `| ${name} | ${p50.toFixed(1)} | ${p99.toFixed(1)} | ${steady.toFixed(1)} | ${(hitRate * 100).toFixed(1)} % | ${share.toFixed(2)} | ${run.ttfts.length} (${run.failed}) |`,
    );
    const tag = name
      .replace(/^llmgw /, '')
      .replace(/ .*/, '')
      .replace(/-/g, '_');
    results[`${tag}_ttft_p50_ms`] = Number(p50.toFixed(1));
    results[`${tag}_ttft_p99_ms`] = Number(p99.toFixed(1));
    results[`${tag}_ttft_p99_steady_ms`] = Number(steady.toFixed(1));
    results[`${tag}_hit_rate`] = Number(hitRate.toFixed(3));
    results[`${tag}_max_share`] = Number(share.toFixed(2));
  }
  // What the slowest 1% of each router's requests were: a conversation's first turn (its system
  // prompt new to the replica, a miss for any router) or a later one (its history elsewhere).
  console.log(
    `\nthe slowest 1% of the requests, by turn (0: the first of a conversation) and by when they were sent; requests that paid a whole system prompt's prefill (>= ${WHOLE_PREFILL_MS} ms):`,
  );
  for (const [name, run] of runs) {
    const slowest = run.ttfts
      .map((ttft, i) => [ttft, run.turns[i], run.sent[i]] as const)
      .sort((a, b) => b[0] - a[0])
      .slice(0, Math.ceil(run.ttfts.length / 100));
    const byTurn = new Map<number, number>();
    for (const [, turn] of slowest) byTurn.set(turn, (byTurn.get(turn) ?? 0) + 1);
    const turns = [...byTurn].sort((a, b) => a[0] - b[0]).map(([turn, n]) => `turn ${turn}: ${n}`);
    const whole = run.ttfts.filter((ttft) => ttft >= WHOLE_PREFILL_MS).length;
    const first = slowest.filter(([, , at]) => at < FIRST_SECOND_MS).length;
    console.log(
      `  ${name}: ${slowest.length} requests from ${slowest.at(-1)![0].toFixed(0)} ms; ${turns.join(', ')}; ${first} sent in a run's first second; ${whole} whole prefills in all`,
    );
  }
  console.log(
    `RESULT gateway-prefix ${Object.entries(results)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ')}`,
  );
} finally {
  await Promise.all([prefixGateway.stop(), lifGateway.stop()]);
  await stack.stop();
}
