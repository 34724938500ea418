// The hand-written structures issue 32 weighed against maintained libraries, on the workloads they
// serve: the figures the comments beside them quote (ns an operation, the best of 5 runs).
// Reproduce: npm run bench -- libraries
import { Heap } from 'heap-js';
import { LRUCache } from 'lru-cache';
import { PerKeyLimit } from '../../src/auth/per-key-limit.ts';

const results: Record<string, number> = {};
function time(name: string, operations: number, run: () => void) {
  run();
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 5; round++) {
    const start = performance.now();
    run();
    best = Math.min(best, performance.now() - start);
  }
  results[name] = Math.round((best * 1e6) / operations);
  console.log(`${name.padEnd(34)} ${String(results[name]).padStart(9)} ns`);
}

// The forwarder's targets: one lookup a request among a few endpoint and path pairs.
const keys = Array.from({ length: 8 }, (_, i) => `http://10.0.0.${i}:8000\n/v1/chat/completions`);
const map = new Map(keys.map((key) => [key, {}]));
const lru = new LRUCache<string, object>({ max: 10_000 });
for (const key of keys) lru.set(key, {});
let found = 0;
const lookups = 2_000_000;
time('targets_map_get', lookups, () => {
  for (let i = 0; i < lookups; i++) found += map.get(keys[i & 7]) ? 1 : 0;
});
time('targets_lru_get', lookups, () => {
  for (let i = 0; i < lookups; i++) found += lru.get(keys[i & 7]) ? 1 : 0;
});

// The per-key limit full of live windows while new addresses keep coming (a flood).
const flood = 20_000;
time('per_key_limit_full_new_key', flood, () => {
  const limit = new PerKeyLimit(60_000, 10_000);
  for (let i = 0; i < 10_000; i++) limit.admit(`k${i}`, 0);
  for (let i = 0; i < flood; i++) limit.admit(`n${i}`, 1000);
});
time('lru_purge_stale_full_new_key', flood, () => {
  let now = 0;
  const windows = new LRUCache<string, number>({
    max: 10_000,
    ttl: 60_000,
    ttlResolution: 0,
    allowStale: true,
    perf: { now: () => now },
  });
  for (let i = 0; i < 10_000; i++) windows.set(`k${i}`, 0);
  now = 1000;
  for (let i = 0; i < flood; i++) if (!windows.get(`n${i}`) && windows.size >= 10_000) windows.purgeStale();
});

// The feed's sent keys: 15,000 distinct keys read over and over, 10,000 kept.
const reads = 500_000;
time('sent_once_set_trimmed', reads, () => {
  const sent = new Set<string>();
  for (let i = 0; i < reads; i++) {
    const key = `d${i % 15_000}`;
    if (sent.has(key)) continue;
    sent.add(key);
    if (sent.size > 10_000) sent.delete(sent.values().next().value!);
  }
});
time('sent_once_lru_ttl', reads, () => {
  const sent = new LRUCache<string, true>({
    max: 10_000,
    ttl: 300_000,
    ttlResolution: 0,
    updateAgeOnHas: true,
  });
  for (let i = 0; i < reads; i++) {
    const key = `d${i % 15_000}`;
    if (!sent.has(key)) sent.set(key, true);
  }
});

// The serving pool's ends: push one, pop the soonest while 64 are served.
const ends = Array.from({ length: 500_000 }, () => ({ at: Math.random() * 1e6, seq: 0 }));
time('heap_js_push_pop', ends.length, () => {
  const heap = new Heap<{ at: number; seq: number }>((a, b) => a.at - b.at || a.seq - b.seq);
  for (const end of ends) {
    heap.push(end);
    if (heap.size() > 64) heap.pop();
  }
  while (heap.size()) heap.pop();
});

console.log(
  `RESULT libraries ${Object.entries(results)
    .map(([name, ns]) => `${name}_ns=${ns}`)
    .join(' ')} found=${found > 0}`,
);
