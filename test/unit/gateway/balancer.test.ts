import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { pickReplica } from '../../../src/gateway/balancer.ts';

const upstreams = (...ids: string[]) => ids.map((id) => ({ id, endpoint: `http://${id}/v1` }));

describe('pickReplica', () => {
  const cases: {
    name: string;
    ids: string[];
    inFlight: Record<string, number>;
    random: number;
    want?: string;
  }[] = [
    { name: 'no candidate: none', ids: [], inFlight: {}, random: 0, want: undefined },
    { name: 'one candidate, however busy', ids: ['a'], inFlight: { a: 9 }, random: 0.9, want: 'a' },
    {
      name: 'the fewest in flight',
      ids: ['a', 'b', 'c'],
      inFlight: { a: 3, b: 1, c: 2 },
      random: 0.99,
      want: 'b',
    },
    { name: 'a replica never sent to counts 0', ids: ['a', 'b'], inFlight: { a: 1 }, random: 0, want: 'b' },
    {
      name: 'a tie: the first of the tied for a low draw',
      ids: ['a', 'b', 'c'],
      inFlight: { a: 2, b: 0, c: 0 },
      random: 0,
      want: 'b',
    },
    {
      name: 'a tie: the last of the tied for a high draw',
      ids: ['a', 'b', 'c'],
      inFlight: { a: 2, b: 0, c: 0 },
      random: 0.99,
      want: 'c',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const picked = pickReplica(
        upstreams(...c.ids),
        (id) => c.inFlight[id] ?? 0,
        () => c.random,
      );
      assert.equal(picked?.id, c.want);
    });
  }

  it('never picks one with more in flight than another, and any of the tied may be picked', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat(5), { minLength: 1, maxLength: 8 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (counts, draw) => {
          const ids = counts.map((_, i) => `r${i}`);
          const picked = pickReplica(
            upstreams(...ids),
            (id) => counts[Number(id.slice(1))],
            () => draw,
          )!;
          const fewest = Math.min(...counts);
          assert.equal(counts[Number(picked.id.slice(1))], fewest);
          const tied = ids.filter((_, i) => counts[i] === fewest);
          assert.equal(picked.id, tied[Math.floor(draw * tied.length)]);
        },
      ),
    );
  });
});
