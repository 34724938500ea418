// What the gateway adds: the TTFT of streamed requests through it against the same engine called
// directly, at 1, 64 and 256 in flight, and the most non-streaming requests a second it forwards with
// small answers. The upstreams (the simulated engine, a token every millisecond; a canned answer for
// the rate) and the clients run in processes of their own; the gateway runs in this one, in front of a
// store with the upstream as the model's one ready replica. All share this machine's cores.
// Reproduce: npm run bench -- gateway [--seconds 5] [--tpot-ms 1]
// Against the Rust routers, side by side: npm run bench -- gateway --peers (peers.ts)
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { startStack } from '../../test/support/stack.ts';
import { type Load, load, quantile } from './load-runner.ts';

if (process.argv.includes('--peers')) {
  // Against vllm-router and sglang-router: peers.ts, with options of its own.
  await import('./peers.ts');
  process.exit(0);
}
const { values } = parseArgs({
  options: { seconds: { type: 'string', default: '5' }, 'tpot-ms': { type: 'string', default: '1' } },
});
const seconds = Number(values.seconds);
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));

async function startEngine(kind: 'sim' | 'fixed'): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', here('./engine.ts'), kind, values['tpot-ms']!], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  return { url: JSON.parse(line.toString()).url, child };
}

const loadFor = (base: string, key: string, mode: 'ttft' | 'rps', concurrency: number) =>
  load(base, key, mode, concurrency, seconds);
const ms = (value: number) => value.toFixed(2);

const stack = await startStack({ gateway: true });
const engine = await startEngine('sim');
const fixed = await startEngine('fixed');
try {
  await stack.call('POST', '/api/v1/orgs', { name: 'Bench' });
  await stack.call('PUT', '/api/v1/models/bench', {
    owner: 'org:Bench',
    min_replicas: 0,
    max_replicas: 1,
    // The upstream serves 4,096 at once (engine.ts): its slots, so that the gateway holds nothing back
    // and what is measured is the gateway's own cost.
    profiles: [{ name: 'cpu', resources: { cores: 1 }, default_concurrency: 4096 }],
  });
  await stack.sql`insert into nodes (name, capacity, gpu_model, labels, state)
    values ('cpu-1', ${stack.sql.json({ cores: 64, memory_gib: 256 })}, null, '{}', 'ready')`;
  const key = await stack.token({ name: 'bench', role: 'client', scope: 'org:Bench' });
  /** Makes `upstream` the model's one ready replica, and waits until the routing table has read it. */
  const serveFrom = async (upstream: string) => {
    await stack.sql`delete from replicas`;
    await stack.sql`insert into replicas (id, model, profile, node, resources, state, endpoint)
      values (${`bench-${upstream.split(':').at(-1)}`}, 'bench', 'cpu', 'cpu-1', ${stack.sql.json({ cores: 1 })},
        'ready', ${`${upstream}/v1`})`;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  };
  await serveFrom(engine.url);

  const results: Record<string, number> = {};
  console.log(`TTFT of streamed requests (ms), ${seconds} s per run, a token every ${values['tpot-ms']} ms`);
  console.log(
    'in flight | direct p50 | gateway p50 | added p50 | direct p99 | gateway p99 | added p99 | requests',
  );
  for (const concurrency of [1, 64, 256]) {
    const direct = await loadFor(engine.url, key, 'ttft', concurrency);
    const through = await loadFor(stack.gatewayUrl!, key, 'ttft', concurrency);
    const [d50, g50, d99, g99] = [
      quantile(direct.ttfts, 0.5),
      quantile(through.ttfts, 0.5),
      quantile(direct.ttfts, 0.99),
      quantile(through.ttfts, 0.99),
    ];
    console.log(
      `${String(concurrency).padStart(9)} | ${ms(d50).padStart(10)} | ${ms(g50).padStart(11)} | ${ms(g50 - d50).padStart(9)} | ${ms(d99).padStart(10)} | ${ms(g99).padStart(11)} | ${ms(g99 - d99).padStart(9)} | ${through.ttfts.length} (${through.failed} failed)`,
    );
    results[`added_p50_ms_c${concurrency}`] = Number(ms(g50 - d50));
    results[`added_p99_ms_c${concurrency}`] = Number(ms(g99 - d99));
  }
  // The most it forwards: non-streaming requests at a few levels in flight, the best kept.
  console.log('\nnon-streaming requests a second, a canned small answer from the upstream');
  console.log("in flight | direct | gateway | gateway's CPU a request");
  await serveFrom(fixed.url);
  const rate = (run: Load) => Math.round(run.answered / run.seconds);
  let best = { rps: 0, inFlight: 0, cpuUs: 0, directRps: 0 };
  for (const concurrency of [16, 64, 256]) {
    const direct = await loadFor(fixed.url, key, 'rps', concurrency);
    // The gateway's own CPU time per request: what it costs whatever else shares the cores.
    const cpuBefore = process.cpuUsage();
    const through = await loadFor(stack.gatewayUrl!, key, 'rps', concurrency);
    const cpu = process.cpuUsage(cpuBefore);
    const cpuUs = Math.round((cpu.user + cpu.system) / through.total);
    console.log(
      `${String(concurrency).padStart(9)} | ${`${rate(direct)}/s`.padStart(6)} | ${`${rate(through)}/s`.padStart(7)} | ${cpuUs} µs (${through.failed} failed)`,
    );
    if (rate(through) > best.rps) {
      best = { rps: rate(through), inFlight: concurrency, cpuUs, directRps: rate(direct) };
    }
  }
  results.rps = best.rps;
  results.rps_in_flight = best.inFlight;
  results.cpu_us_per_request = best.cpuUs;
  results.direct_rps = best.directRps;
  console.log(
    `RESULT gateway ${Object.entries(results)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ')}`,
  );
} finally {
  engine.child.stdin!.end();
  fixed.child.stdin!.end();
  await stack.stop();
}
