import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  type Collections,
  collectingDuring,
  readCollections,
  type SentRequest,
  stallSources,
} from '../../../bench/gateway/stalls.ts';

describe('collectingDuring', () => {
  const spans: Collections = [
    [100, 110],
    [200, 500],
    [300, 305],
    [900, 901],
  ];
  const cases: { name: string; from: number; to: number; expected: boolean }[] = [
    { name: 'a wait that holds a whole collection', from: 95, to: 115, expected: true },
    { name: 'a wait inside a collection', from: 102, to: 104, expected: true },
    { name: 'a wait that starts as a collection ends', from: 110, to: 120, expected: true },
    { name: 'a wait after a collection ended', from: 111, to: 190, expected: false },
    { name: 'a wait that ends before a collection starts', from: 850, to: 899, expected: false },
    {
      name: 'a wait within a long collection that a later short one follows',
      from: 400,
      to: 450,
      expected: true,
    },
    { name: 'a wait before any collection', from: 0, to: 50, expected: false },
    { name: 'a wait after every collection', from: 1000, to: 2000, expected: false },
  ];
  const collecting = collectingDuring(spans);
  for (const { name, from, to, expected } of cases) {
    it(name, () => assert.equal(collecting(from, to), expected));
  }

  it('answers as a look at every collection does', () => {
    // Collections of any length, some longer than the gaps between them.
    const span = fc.tuple(fc.integer({ min: 0, max: 5000 }), fc.integer({ min: 0, max: 5000 }));
    fc.assert(
      fc.property(
        fc.array(span, { maxLength: 40 }),
        fc.integer({ min: 0, max: 6000 }),
        fc.integer({ min: 0, max: 100 }),
        (raw, from, wait) => {
          const sorted = raw
            .map(([start, length]) => [start, start + length] as const)
            .sort((a, b) => a[0] - b[0]);
          const every = sorted.some(([start, end]) => start <= from + wait && end >= from);
          assert.equal(collectingDuring(sorted)(from, from + wait), every);
        },
      ),
    );
  });
});

describe('stallSources', () => {
  // 200 requests of 1 ms, one every 10 ms; the two slowest wait 50 ms, one in each source's collection.
  const requests: SentRequest[] = Array.from({ length: 200 }, (_, i) => ({ sent: i * 10, ttft: 1 }));
  requests[20] = { sent: 200, ttft: 50 };
  requests[100] = { sent: 1000, ttft: 50 };
  const sources = new Map<string, Collections>([
    ['engines', [[220, 225]]],
    [
      'clients',
      [
        [1010, 1012],
        [1500, 1502],
      ],
    ],
    ['llmgw', []],
  ]);

  it('names the sources the slowest 1% waited through, and what chance gives across all', () => {
    const found = stallSources(requests, sources);
    assert.equal(found.slowest, 2);
    assert.deepEqual(found.ofSlowest, { engines: 0.5, clients: 0.5, llmgw: 0 });
    assert.equal(found.noneOfSlowest, 0);
    // Of all 200, also those of 1 ms sent as a collection began: at 220 (engines), 1010 and 1500 (clients).
    assert.deepEqual(found.ofAll, { engines: 2 / 200, clients: 3 / 200, llmgw: 0 });
  });

  it('counts the slowest that no source held up', () => {
    const found = stallSources(requests, new Map([['engines', [[5000, 5001]] as Collections]]));
    assert.equal(found.noneOfSlowest, 1);
    assert.deepEqual(found.ofSlowest, { engines: 0 });
  });
});

describe('readCollections', () => {
  it("merges a role's processes, sorted, and takes the role from the name before the pid", () => {
    const dir = mkdtempSync(join(tmpdir(), 'stalls-test-'));
    try {
      writeFileSync(join(dir, 'llmgw-base-11.jsonl'), '[300,2]\n[100,1.5]\n');
      writeFileSync(join(dir, 'llmgw-base-12.jsonl'), '[200,1]\n');
      writeFileSync(join(dir, 'engines-13.jsonl'), '[50,10]\n');
      const roles = readCollections(dir);
      assert.deepEqual(roles.get('llmgw-base'), [
        [100, 101.5],
        [200, 201],
        [300, 302],
      ]);
      assert.deepEqual(roles.get('engines'), [[50, 60]]);
      assert.equal(roles.size, 2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
