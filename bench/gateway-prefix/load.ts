// The prefix-sharing workload's clients, in a process of their own: USERS users for SECONDS, each
// holding multi-turn conversations (every turn resends the conversation so far) that open with one of
// SYSTEMS long shared system prompts. Prints a JSON line: each streamed request's TTFT (ms, to its
// first chunk) and the failures. The same SEED gives the same conversations.
// Usage: load.ts BASE_URL KEY USERS SECONDS SEED
import { Agent, request } from 'node:http';
import { performance } from 'node:perf_hooks';

const [base, key, users, seconds, seed] = process.argv.slice(2);
/** System prompts of SYSTEM_WORDS words: more of them than one engine's prefix cache holds. */
const SYSTEMS = 40;
const SYSTEM_WORDS = 1000;
const TURNS = 5;
const USER_WORDS = 50;
const ANSWER_TOKENS = 16;

const words = (prefix: string, count: number) =>
  Array.from({ length: count }, (_, i) => `${prefix}${i}`).join(' ');
const systems = Array.from({ length: SYSTEMS }, (_, s) => words(`s${s}w`, SYSTEM_WORDS));
const answer = words('tok', ANSWER_TOKENS);

let state = Number(seed) >>> 0;
const random = () => {
  state = (state * 1664525 + 1013904223) >>> 0;
  return state / 4294967296;
};

const agent = new Agent({ keepAlive: true, maxSockets: Number(users) });
const url = new URL('/v1/chat/completions', base);
const ttfts: number[] = [];
/** Each TTFT's turn in its conversation (0: the first, with the system prompt alone before it). */
const turns: number[] = [];
let failed = 0;
let conversations = 0;
const began = performance.now();
const until = began + Number(seconds) * 1000;
/** When each request was sent, ms after the run began. */
const sent: number[] = [];

/** One streamed request: when its first chunk came, after it was sent. */
const send = (messages: unknown[]) =>
  new Promise<{ status: number; ttft: number; at: number }>((resolve, reject) => {
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
        reply.on('end', () => resolve({ status: reply.statusCode ?? 0, ttft, at: sentAt - began }));
        reply.on('error', reject);
      },
    );
    sent.on('error', reject);
    sent.end(body);
  });

async function user() {
  while (performance.now() < until) {
    const id = conversations++;
    const messages: { role: string; content: string }[] = [
      { role: 'system', content: systems[Math.floor(random() * SYSTEMS)] },
    ];
    for (let turn = 0; turn < TURNS && performance.now() < until; turn++) {
      messages.push({ role: 'user', content: words(`c${id}t${turn}w`, USER_WORDS) });
      try {
        const { status, ttft, at } = await send(messages);
        if (status === 200) {
          ttfts.push(ttft);
          turns.push(turn);
          sent.push(at);
        } else failed++;
      } catch {
        failed++;
      }
      messages.push({ role: 'assistant', content: answer });
    }
  }
}

await Promise.all(Array.from({ length: Number(users) }, user));
console.log(JSON.stringify({ ttfts, turns, sent, failed, conversations }));
