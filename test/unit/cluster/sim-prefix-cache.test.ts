// The simulated engine's prefix cache (src/cluster/sim/engine-prefix-cache.ts): a prompt's cached
// leading blocks need no prefill; the least recently used blocks go first past its capacity.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CACHE_BLOCK_TOKENS, SimPrefixCache } from '../../../src/cluster/sim/engine-prefix-cache.ts';

const words = (from: number, count: number) =>
  Array.from({ length: count }, (_, i) => `w${from + i}`).join(' ');

describe('SimPrefixCache', () => {
  it("prefills only what follows a prompt's cached whole blocks, and counts queries and hits in tokens", () => {
    const cache = new SimPrefixCache(10_000);
    assert.equal(cache.admit(words(0, 100)), 100, 'nothing cached yet');
    // The first 96 words (6 whole blocks) are cached; the turn's history is resent with 20 more.
    assert.equal(cache.admit(`${words(0, 100)} ${words(1000, 20)}`), 120 - 6 * CACHE_BLOCK_TOKENS);
    assert.equal(cache.admit(words(500, 40)), 40, 'another prompt shares nothing');
    assert.deepEqual([cache.queries, cache.hits], [260, 96]);
  });

  it('forgets the least recently used blocks past its capacity', () => {
    const cache = new SimPrefixCache(4 * CACHE_BLOCK_TOKENS);
    cache.admit(words(0, 64)); // A: 4 blocks, all it holds
    cache.admit(words(100, 32)); // B: 2 blocks, the 2 oldest of A out... A's first blocks
    assert.equal(cache.admit(words(100, 32)), 0, 'B is held');
    assert.equal(cache.admit(words(0, 64)), 64, "A's leading blocks were evicted: its prefix is gone");
  });
});
