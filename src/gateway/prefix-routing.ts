import { pickReplica } from './balancer.ts';
import type { ChooseReplica } from './forwarder.ts';
import type { Upstream } from './routing-table.ts';

/**
 * Characters of prompt text per block: about 16 tokens, the KV cache's usual block (vLLM's default
 * block size), so that a block the gateway counts as shared is about one the engine can reuse.
 */
export const BLOCK_CHARS = 64;
/**
 * Blocks remembered per replica (about 300,000 tokens of prompts): roughly what one engine's KV cache
 * holds, so that what the gateway believes a replica still has is about what the engine has not evicted.
 */
export const BLOCKS_PER_REPLICA = 20_000;
/**
 * A replica takes a request for its cached prefix only while it has at most this many times its share
 * of the model's requests in flight (plus one): past it the request goes elsewhere, and a popular
 * prefix spreads over replicas instead of queueing on one. Not lower: a request sent away pays its
 * whole prefill, and at 1.5 those few moves were the slowest 1% (docs/gateway.md "Prefix routing").
 */
export const LOAD_FACTOR = 2;

/**
 * A prompt's text as blocks of BLOCK_CHARS, each named by a hash of it and of every block before it:
 * two prompts share their first n names exactly when they share their first n blocks of text (but for
 * hash collisions, which cost one cache miss). The last partial block is left out: an engine caches
 * whole blocks only. The text is hashed piece by piece as it comes (`add`), never joined into one
 * string: a request's prompt can be long, and this runs for every request.
 */
export class BlockHasher {
  readonly blocks: number[] = [];
  private hash = 0x811c9dc5;
  private filled = 0;

  add(text: string) {
    let { hash, filled } = this;
    for (let i = 0; i < text.length; i++) {
      hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
      if (++filled === BLOCK_CHARS) {
        this.blocks.push(hash >>> 0);
        filled = 0;
      }
    }
    this.hash = hash;
    this.filled = filled;
  }
}

/** The blocks of a text (BlockHasher). */
export function promptBlocks(text: string): number[] {
  const hasher = new BlockHasher();
  hasher.add(text);
  return hasher.blocks;
}

/**
 * The blocks of what an engine caches for a request: its chat messages in order (role and content),
 * or its prompt; what promptText gives, without building it.
 */
export function requestBlocks(body: Record<string, unknown>): number[] {
  const hasher = new BlockHasher();
  addPrompt(hasher, body);
  return hasher.blocks;
}

/** The text an engine caches for a request, as requestBlocks reads it (for tests and sentences). */
export function promptText(body: Record<string, unknown>): string {
  let text = '';
  addPrompt(
    {
      add(piece: string) {
        text += piece;
      },
    },
    body,
  );
  return text;
}

function addPrompt(hasher: Pick<BlockHasher, 'add'>, body: Record<string, unknown>) {
  const messages = body.messages;
  if (Array.isArray(messages)) {
    for (const message of messages) {
      const { role, content } = (message ?? {}) as { role?: unknown; content?: unknown };
      hasher.add(`<${String(role)}>`);
      addContent(hasher, content);
    }
    return;
  }
  addContent(hasher, body.prompt ?? body.input);
}

function addContent(hasher: Pick<BlockHasher, 'add'>, content: unknown) {
  if (typeof content === 'string') return hasher.add(content);
  if (!Array.isArray(content)) return;
  for (const part of content) {
    if (typeof part === 'string') hasher.add(part);
    else addContent(hasher, (part as { text?: unknown })?.text);
  }
}

/**
 * Where a prefix no replica holds goes: of the replicas with the fewest in flight, the one whose name
 * hashed with the prefix's first block is highest (rendezvous hashing), not one at random. Gateways
 * and gateway workers that do not share their prefix trees then put a new prefix on the same replica
 * while the loads they see are alike, and its next requests find it there whichever one they reach.
 */
function placeNew(
  first: number,
  free: readonly Upstream[],
  inFlight: (id: string) => number,
): Upstream | undefined {
  let fewest = Number.POSITIVE_INFINITY;
  for (const upstream of free) fewest = Math.min(fewest, inFlight(upstream.id));
  let chosen: Upstream | undefined;
  let highest = -1;
  for (const upstream of free) {
    if (inFlight(upstream.id) !== fewest) continue;
    let hash = first;
    for (let i = 0; i < upstream.id.length; i++)
      hash = Math.imul(hash ^ upstream.id.charCodeAt(i), 0x01000193);
    hash = Math.imul(hash ^ (hash >>> 15), 0x2c1b3c6d) >>> 0;
    if (hash > highest) {
      highest = hash;
      chosen = upstream;
    }
  }
  return chosen;
}

/**
 * Routing by prompt prefix (SGLang router's `cache_aware` idea): each replica's recent prompt blocks,
 * an approximate picture of its KV cache (least recently used blocks forgotten past BLOCKS_PER_REPLICA).
 * A request goes to the replica that shares the longest prefix with it, among those within their share
 * of the load (LOAD_FACTOR); with no shared prefix, to the one with the fewest in flight. Its blocks are
 * then counted as held by the replica it went to.
 */
export class PrefixRouter {
  /** Per replica, its blocks in order of last use (a Set keeps insertion order: the first is the oldest). */
  private readonly held = new Map<string, Set<number>>();

  constructor(private readonly blocksPerReplica = BLOCKS_PER_REPLICA) {}

  readonly choose: ChooseReplica = (request, free, inFlight) => {
    const blocks = request.blocks;
    if (!blocks || blocks.length === 0 || free.length < 2) {
      const upstream = pickReplica(free, inFlight);
      if (upstream && blocks) this.remember(upstream.id, blocks);
      return upstream && { upstream, reason: 'least_in_flight' };
    }
    let total = 0;
    for (const upstream of free) total += inFlight(upstream.id);
    const cap = Math.ceil((LOAD_FACTOR * (total + 1)) / free.length) + 1;
    let best: (typeof free)[number] | undefined;
    let bestShared = 0;
    let bestOverall = 0;
    for (const upstream of free) {
      const shared = this.shared(upstream.id, blocks);
      bestOverall = Math.max(bestOverall, shared);
      if (shared === 0 || inFlight(upstream.id) + 1 > cap) continue;
      if (
        shared > bestShared ||
        (shared === bestShared && best && inFlight(upstream.id) < inFlight(best.id))
      ) {
        best = upstream;
        bestShared = shared;
      }
    }
    // The replica holding the longest prefix may be over its share: then the next best holder within
    // its share, else the least loaded (`balanced`: the prefix was not what decided).
    let reason = bestShared < bestOverall ? 'balanced' : 'prefix';
    if (!best) {
      best = bestOverall > 0 ? pickReplica(free, inFlight) : placeNew(blocks[0], free, inFlight);
      reason = bestOverall > 0 ? 'balanced' : 'least_in_flight';
    }
    if (!best) return undefined;
    this.remember(best.id, blocks);
    return { upstream: best, reason };
  };

  /** Forgets replicas the routing table no longer has. */
  keepOnly(ids: ReadonlySet<string>) {
    for (const id of this.held.keys()) if (!ids.has(id)) this.held.delete(id);
  }

  /** Leading blocks of `blocks` the replica holds. */
  private shared(id: string, blocks: readonly number[]): number {
    const held = this.held.get(id);
    if (!held) return 0;
    let count = 0;
    while (count < blocks.length && held.has(blocks[count])) count++;
    return count;
  }

  private remember(id: string, blocks: readonly number[]) {
    let held = this.held.get(id);
    if (!held) {
      held = new Set();
      this.held.set(id, held);
    }
    for (const block of blocks) {
      held.delete(block);
      held.add(block);
    }
    for (const oldest of held) {
      if (held.size <= this.blocksPerReplica) break;
      held.delete(oldest);
    }
  }
}
