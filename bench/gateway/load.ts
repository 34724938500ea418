// The gateway benchmark's clients, in a process of their own: CONCURRENCY requests in flight for
// SECONDS (after a second of warm-up), each sent again as soon as it is answered, on kept-alive
// connections. Prints a JSON line: the TTFT of each streamed request (ms, to its first chunk), or the
// count of non-streaming answers, and every answer sent, warm-up included (what the gateway's CPU served).
// With `sent`, also when each timed request was sent (ms since the epoch), in the order of the TTFTs.
// Usage: load.ts BASE_URL KEY ttft|rps CONCURRENCY SECONDS [sent]
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

const [base, key, mode, concurrency, seconds, withSent] = process.argv.slice(2);
const streamed = mode === 'ttft';
const body = JSON.stringify({
  model: 'bench',
  stream: streamed,
  max_tokens: streamed ? 2 : 1,
  messages: [{ role: 'user', content: 'hi' }],
});
const agent = new Agent({ keepAlive: true, maxSockets: Number(concurrency) });
const url = new URL('/v1/chat/completions', base);
const headers = {
  authorization: `Bearer ${key}`,
  'content-type': 'application/json',
  'content-length': Buffer.byteLength(body),
};
const ttfts: number[] = [];
const sent: number[] = [];
let answered = 0;
let total = 0;
let failed = 0;
const warmUntil = performance.now() + 1000;
const until = warmUntil + Number(seconds) * 1000;

/** One request: its status and when its first bytes came. */
const send = () =>
  new Promise<{ status: number; firstAt: number }>((resolve, reject) => {
    const sent = request(url, { method: 'POST', agent, headers }, (answer) => {
      let firstAt = 0;
      answer.on('data', () => {
        firstAt ||= performance.now();
      });
      answer.on('end', () => resolve({ status: answer.statusCode ?? 0, firstAt }));
      answer.on('error', reject);
    });
    sent.on('error', reject);
    sent.end(body);
  });

async function client() {
  while (performance.now() < until) {
    const sentAt = performance.now();
    try {
      const { status, firstAt } = await send();
      total++;
      if (status !== 200) failed++;
      else if (sentAt >= warmUntil && firstAt <= until) {
        answered++;
        if (streamed) ttfts.push(firstAt - sentAt);
        if (streamed && withSent) sent.push(performance.timeOrigin + sentAt);
      }
    } catch {
      failed++;
    }
  }
}

await Promise.all(Array.from({ length: Number(concurrency) }, client));
console.log(
  JSON.stringify({ ttfts, ...(withSent && { sent }), answered, total, failed, seconds: Number(seconds) }),
);
