// Routing by prompt prefix (src/gateway/prefix-routing.ts): requests sharing a prefix go to the replica
// that holds it, within that replica's share of the load; without a shared prefix, to the least loaded.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Forwarded } from '../../../src/gateway/forwarder.ts';
import {
  BLOCK_CHARS,
  LOAD_FACTOR,
  PrefixRouter,
  promptBlocks,
  promptText,
  requestBlocks,
} from '../../../src/gateway/prefix-routing.ts';

const replicas = ['r1', 'r2', 'r3', 'r4'].map((id) => ({ id, endpoint: `http://127.0.0.1:1/${id}/v1` }));
const request = (text: string) => ({ blocks: promptBlocks(text) }) as Forwarded;
const system = 'You are a helpful assistant who answers in French. '.repeat(20);

describe('promptBlocks', () => {
  it('two prompts share their first n block names exactly when they share their first n blocks of text (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 400 }),
        fc.string({ maxLength: 200 }),
        fc.string({ maxLength: 200 }),
        (shared, a, b) => {
          const [x, y] = [promptBlocks(shared + a), promptBlocks(shared + b)];
          const whole = Math.floor(shared.length / BLOCK_CHARS);
          assert.deepEqual(x.slice(0, whole), y.slice(0, whole));
          assert.equal(x.length, Math.floor((shared + a).length / BLOCK_CHARS));
        },
      ),
    );
  });

  it("names a request's blocks as those of its prompt's text, built or not (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('system', 'user', 'assistant'), fc.string({ maxLength: 150 })), {
          maxLength: 6,
        }),
        (pieces) => {
          const body = { messages: pieces.map(([role, content]) => ({ role, content })) };
          assert.deepEqual(requestBlocks(body), promptBlocks(promptText(body)));
        },
      ),
    );
  });

  it('reads chat messages in order with their roles, and a prompt', () => {
    assert.equal(
      promptText({
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        ],
      }),
      '<system>be brief<user>hi',
    );
    assert.equal(promptText({ prompt: 'once upon' }), 'once upon');
  });
});

describe('PrefixRouter', () => {
  it('sends requests that share a long prefix to the replica that got the first, while it is within its share', () => {
    const router = new PrefixRouter();
    const counts = new Map<string, number>();
    const inFlight = (id: string) => counts.get(id) ?? 0;
    const first = router.choose(request(`${system}question one`), replicas, inFlight)!;
    counts.set(first.upstream.id, 1);
    const second = router.choose(request(`${system}question two`), replicas, inFlight)!;
    assert.equal(second.upstream.id, first.upstream.id);
    assert.equal(second.reason, 'prefix');
    // Over its share (the three others idle): the next request with the prefix goes elsewhere.
    counts.set(first.upstream.id, Math.ceil((LOAD_FACTOR * 4) / 4) + 2);
    const third = router.choose(request(`${system}question three`), replicas, inFlight)!;
    assert.notEqual(third.upstream.id, first.upstream.id);
    assert.equal(third.reason, 'balanced');
  });

  it('without a shared prefix, chooses the replica with the fewest in flight', () => {
    const router = new PrefixRouter();
    const counts = new Map([
      ['r1', 3],
      ['r2', 1],
      ['r3', 2],
      ['r4', 5],
    ]);
    const chosen = router.choose(request('x'.repeat(200)), replicas, (id) => counts.get(id)!)!;
    assert.deepEqual([chosen.upstream.id, chosen.reason], ['r2', 'least_in_flight']);
  });

  it('two routers that share nothing put a new prefix on the same replica while their loads are alike', () => {
    const idle = () => 0;
    for (let conversation = 0; conversation < 20; conversation++) {
      const text = `${conversation} ${system}`;
      const [a, b] = [new PrefixRouter(), new PrefixRouter()];
      assert.equal(
        a.choose(request(text), replicas, idle)!.upstream.id,
        b.choose(request(text), [...replicas].reverse(), idle)!.upstream.id,
      );
    }
  });

  it('never sends a request to a replica over its share of the load when another is under it (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 5 }), fc.integer({ min: 0, max: 3 }), fc.boolean()), {
          minLength: 1,
          maxLength: 200,
        }),
        (steps) => {
          const router = new PrefixRouter(500);
          const counts = new Map<string, number>();
          const inFlight = (id: string) => counts.get(id) ?? 0;
          for (const [conversation, turn, finishOne] of steps) {
            const text = `${system.slice(0, 64 * (conversation + 1))}${'turn '.repeat(30 * turn)}`;
            const total = replicas.reduce((sum, r) => sum + inFlight(r.id), 0);
            const cap = Math.ceil((LOAD_FACTOR * (total + 1)) / replicas.length) + 1;
            const least = Math.min(...replicas.map((r) => inFlight(r.id)));
            const { upstream } = router.choose(request(text), replicas, inFlight)!;
            assert.ok(inFlight(upstream.id) + 1 <= cap || inFlight(upstream.id) === least);
            counts.set(upstream.id, inFlight(upstream.id) + 1);
            if (finishOne) {
              const busiest = replicas.reduce((a, b) => (inFlight(a.id) >= inFlight(b.id) ? a : b));
              counts.set(busiest.id, Math.max(0, inFlight(busiest.id) - 1));
            }
          }
        },
      ),
    );
  });
});
