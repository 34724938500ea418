// The gateway bench's order of routers in each pass (bench/support/pass-order.ts): each pass runs every
// router once, and over a whole square each runs right after every other equally often.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { passOrder } from '../../../bench/support/pass-order.ts';

describe("the gateway bench's order of routers", () => {
  it('with llmgw, the Node floor, vllm-router and sglang-router, llmgw follows each other once in the three rounds after the first', () => {
    const routers = ['llmgw', 'node-floor', 'vllm-router', 'sglang-router'];
    const before = [1, 2, 3].map((pass) => {
      const order = passOrder(routers, pass);
      return order[order.indexOf('llmgw') - 1];
    });
    assert.deepEqual([...before].sort(), ['node-floor', 'sglang-router', 'vllm-router']);
  });

  it('each pass runs every item once; over n passes (2n if n is odd) each runs right after every other, and first, equally often', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 9 }), fc.nat(30), (n, offset) => {
        const items = Array.from({ length: n }, (_, i) => i);
        const rows = n % 2 === 0 ? n : 2 * n;
        const follows = new Map<string, number>();
        const firsts = new Map<number, number>();
        for (let pass = offset; pass < offset + rows; pass++) {
          const order = passOrder(items, pass);
          assert.deepEqual(
            [...order].sort((a, b) => a - b),
            items,
          );
          firsts.set(order[0], (firsts.get(order[0]) ?? 0) + 1);
          for (let i = 1; i < n; i++) {
            const pair = `${order[i - 1]}>${order[i]}`;
            follows.set(pair, (follows.get(pair) ?? 0) + 1);
          }
        }
        assert.equal(new Set(firsts.values()).size, 1);
        assert.equal(follows.size, n * (n - 1));
        assert.ok(new Set(follows.values()).size <= 1, `uneven: ${JSON.stringify([...follows])}`);
      }),
    );
  });
});
