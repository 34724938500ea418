/** Prompt tokens per cached block (vLLM's default block size): only whole blocks are reused. */
export const CACHE_BLOCK_TOKENS = 16;

/**
 * The simulated engine's prefix cache, as vLLM's automatic prefix caching behaves: a prompt's whole
 * blocks of CACHE_BLOCK_TOKENS tokens (words here) are kept, each named by its text and every block
 * before it, least recently used first out past `capacityTokens`. A prompt's leading blocks found in it
 * need no prefill. Counts the prompt tokens asked for and found, as vLLM's
 * prefix_cache_queries / prefix_cache_hits do.
 */
export class SimPrefixCache {
  /** Block names in order of last use: a Set keeps insertion order, the first is the oldest. */
  private readonly blocks = new Set<number>();
  queries = 0;
  hits = 0;

  constructor(private readonly capacityTokens: number) {}

  /** The prompt's tokens not in the cache (to prefill); its blocks are kept from now on. */
  admit(text: string): number {
    const words = text.split(/\s+/).filter(Boolean);
    const names = blockNames(words);
    let found = 0;
    while (found < names.length && this.blocks.has(names[found])) found++;
    this.queries += words.length;
    this.hits += found * CACHE_BLOCK_TOKENS;
    for (const name of names) {
      this.blocks.delete(name);
      this.blocks.add(name);
    }
    const most = Math.floor(this.capacityTokens / CACHE_BLOCK_TOKENS);
    for (const oldest of this.blocks) {
      if (this.blocks.size <= most) break;
      this.blocks.delete(oldest);
    }
    return words.length - found * CACHE_BLOCK_TOKENS;
  }
}

function blockNames(words: string[]): number[] {
  const names: number[] = [];
  let hash = 0x811c9dc5;
  const whole = words.length - (words.length % CACHE_BLOCK_TOKENS);
  for (let i = 0; i < whole; i++) {
    const word = words[i];
    for (let c = 0; c < word.length; c++) hash = Math.imul(hash ^ word.charCodeAt(c), 0x01000193);
    hash = Math.imul(hash ^ 32, 0x01000193);
    if ((i + 1) % CACHE_BLOCK_TOKENS === 0) names.push(hash >>> 0);
  }
  return names;
}
