// The prefix-sharing workload's clients, in a process of their own: USERS users, each holding multi-turn
// conversations (every turn resends the conversation so far) that open with one of SYSTEMS long shared
// system prompts. First WARM_S seconds of the same workload on words of its own (it shares no prefix
// with what follows), not measured; then a line `warm` on stdout, and once a line comes on stdin (the
// caller has read the engines' counters), SECONDS measured. Prints a JSON line: each streamed request's
// TTFT (ms, to its first chunk), its turn and when it was sent, and the failures. The same SEED gives the
// same conversations.
// Usage: load.ts BASE_URL KEY USERS WARM_S SECONDS SEED
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

const [base, key, users, warmSeconds, seconds, seed] = process.argv.slice(2);
/** System prompts of SYSTEM_WORDS words: more of them than one engine's prefix cache holds. */
const SYSTEMS = 40;
const SYSTEM_WORDS = 1000;
const TURNS = 5;
const USER_WORDS = 50;
const ANSWER_TOKENS = 16;

const words = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}${i}`).join(' ');

/** A seeded generator in [0, 1): each phase starts from SEED, so a measured run's choices do not depend on the warm-up's. */
const seeded = () => {
  let state = Number(seed) >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 4294967296;
  };
};

const agent = new Agent({ keepAlive: true, maxSockets: Number(users) });
const url = new URL('/v1/chat/completions', base);

/** One streamed request: its status, its TTFT, and when it was sent (performance.now()). */
const send = (messages: unknown[]) =>
  new Promise<{ status: number; ttft: number; sentAt: number }>((resolve, reject) => {
    const body = JSON.stringify({ model: 'bench', stream: true, max_tokens: ANSWER_TOKENS, messages });
    const sentAt = performance.now();
    const sent = request(
      url,
      {
        method: 'POST',
        agent,
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
      },
      (reply) => {
        let ttft = 0;
        reply.on('data', () => {
          ttft ||= performance.now() - sentAt;
        });
        reply.on('end', () => resolve({ status: reply.statusCode ?? 0, ttft, sentAt }));
        reply.on('error', reject);
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });

/** The workload for `seconds`, every word starting with `vocabulary`: what each request found. */
async function workload(vocabulary: string, seconds: number) {
  const systems = Array.from({ length: SYSTEMS }, (_, s) => words(`${vocabulary}s${s}w`, SYSTEM_WORDS));
  const answer = words(`${vocabulary}tok`, ANSWER_TOKENS);
  const random = seeded();
  const began = performance.now();
  const until = began + seconds * 1000;
  const found = {
    ttfts: [] as number[],
    /** Each TTFT's turn in its conversation (0: the first, with the system prompt alone before it). */
    turns: [] as number[],
    /** When each request was sent, ms after the run began. */
    sent: [] as number[],
    failed: 0,
    conversations: 0,
  };
  const user = async () => {
    while (performance.now() < until) {
      const id = found.conversations++;
      const messages = [{ role: 'system', content: systems[Math.floor(random() * SYSTEMS)] }];
      for (let turn = 0; turn < TURNS && performance.now() < until; turn++) {
        messages.push({ role: 'user', content: words(`${vocabulary}c${id}t${turn}w`, USER_WORDS) });
        try {
          const { status, ttft, sentAt } = await send(messages);
          if (status === 200) {
            found.ttfts.push(ttft);
            found.turns.push(turn);
            found.sent.push(sentAt - began);
          } else found.failed++;
        } catch {
          found.failed++;
        }
        messages.push({ role: 'assistant', content: answer });
      }
    }
  };
  await Promise.all(Array.from({ length: Number(users) }, user));
  return found;
}

await workload('warm', Number(warmSeconds));
console.log('warm');
await once(process.stdin, 'data');
process.stdin.pause();
console.log(JSON.stringify(await workload('', Number(seconds))));
