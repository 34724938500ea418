// The gateway benchmark's upstream, as a process of its own: prints its URL, then serves until its
// parent closes its stdin. `sim TPOT_MS`: the simulated engine, a token every TPOT_MS with no growth,
// so that a TTFT is its first token plus what stands between it and the client. `fixed`: one small
// canned answer to any request, the cheapest upstream there is, so that the gateway's own ceiling shows.
// Usage: engine.ts sim|fixed|prefix [TPOT_MS] [COUNT]: COUNT engines in this process.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startSimEngine } from '../../src/cluster/sim/engine.ts';

async function fixedAnswers(): Promise<{ url: string; stop(): Promise<void> }> {
  const answer = JSON.stringify({
    id: 'cmpl-fixed',
    object: 'chat.completion',
    model: 'bench',
    choices: [{ index: 0, message: { role: 'assistant', content: ' ok' }, finish_reason: 'length' }],
    usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
  });
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end(answer));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const [kind, tpotMs, count] = process.argv.slice(2);
/**
 * `prefix`: engines with a prefix cache and a prefill cost (bench/gateway-prefix): 0.25 ms a prompt
 * token not cached (4,000 tokens a second), 30,000 tokens cached each, a token every TPOT_MS.
 */
const start = (seed: number) =>
  kind === 'fixed'
    ? fixedAnswers()
    : startSimEngine({
        model: 'bench',
        maxBatch: 4096,
        baseTpotMs: Number(tpotMs ?? '1'),
        tpotGrowthMs: 0,
        prefillMsPerToken: kind === 'prefix' ? 0.25 : 0,
        prefixCacheTokens: kind === 'prefix' ? 30_000 : 0,
        jitter: 0,
        seed,
      });
const engines = await Promise.all(Array.from({ length: Number(count ?? '1') }, (_, i) => start(i + 1)));
console.log(JSON.stringify({ url: engines[0].url, urls: engines.map((e) => e.url) }));
process.stdin.resume();
process.stdin.on('end', () => Promise.all(engines.map((e) => e.stop())).then(() => process.exit(0)));
