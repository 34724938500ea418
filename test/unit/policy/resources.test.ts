import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DIMENSIONS } from '../../../src/domain/resources.ts';
import {
  add,
  addInto,
  complete,
  exceeding,
  fitsWithin,
  formatResources,
  isEmpty,
  subtract,
  sum,
  usesAnyOf,
} from '../../../src/policy/resources.ts';

describe('resources', () => {
  it('adds and subtracts on every dimension either side sets', () => {
    assert.deepEqual(add({ gpus: 2 }, { cores: 4 }), { gpus: 2, cores: 4 });
    assert.deepEqual(subtract({ gpus: 8, cores: 64 }, { gpus: 2 }), { gpus: 6, cores: 64 });
    assert.deepEqual(subtract({ gpus: 1 }, { gpus: 3 }), { gpus: -2 });
  });

  // add, subtract and exceeding spell each dimension out for speed: a new dimension must be added there too.
  for (const d of DIMENSIONS) {
    it(`add, subtract and exceeding cover ${d}`, () => {
      assert.deepEqual(add({}, { [d]: 2 }), { [d]: 2 });
      assert.deepEqual(subtract({ [d]: 5 }, { [d]: 2 }), { [d]: 3 });
      assert.equal(exceeding({ [d]: 2 }, { [d]: 1 }), d);
      const total = complete({});
      addInto(total, { [d]: 2 });
      assert.equal(total[d], 2);
    });
  }

  it('addInto adds in place on every dimension, without float drift', () => {
    const total = complete({ gpus: 1 });
    addInto(total, { cores: 0.1 });
    addInto(total, { gpus: 2, cores: 0.2 });
    assert.deepEqual(total, { gpus: 3, cores: 0.3, memory_gib: 0 });
  });

  it('sums without float drift on cores and memory', () => {
    assert.deepEqual(sum([{ cores: 0.1 }, { cores: 0.2 }]), { cores: 0.3 });
    assert.deepEqual(sum(Array.from({ length: 10 }, () => ({ memory_gib: 0.1 }))), { memory_gib: 1 });
    assert.deepEqual(sum([]), {});
  });

  const fits = [
    { name: 'within on the set dimension', a: { gpus: 4 }, bound: { gpus: 8 }, fits: true },
    { name: 'equal is within', a: { gpus: 8, cores: 64 }, bound: { gpus: 8, cores: 64 }, fits: true },
    { name: 'above on a set dimension', a: { gpus: 9 }, bound: { gpus: 8 }, fits: false, over: 'gpus' },
    {
      name: 'unset dimensions of the bound do not count',
      a: { gpus: 1, cores: 999 },
      bound: { gpus: 8 },
      fits: true,
    },
    { name: 'absent in a counts as 0', a: {}, bound: { gpus: 0 }, fits: true },
    {
      name: 'multi-dimension: the first one passed',
      a: { gpus: 1, cores: 9, memory_gib: 99 },
      bound: { gpus: 2, cores: 8, memory_gib: 10 },
      fits: false,
      over: 'cores',
    },
  ] as const;
  for (const c of fits) {
    it(`fitsWithin / exceeding: ${c.name}`, () => {
      assert.equal(fitsWithin(c.a, c.bound), c.fits);
      assert.equal(exceeding(c.a, c.bound), 'over' in c ? c.over : null);
    });
  }

  it('usesAnyOf looks only at dimensions the bound sets', () => {
    assert.equal(usesAnyOf({ cores: 4 }, { gpus: 8 }), false);
    assert.equal(usesAnyOf({ gpus: 1, cores: 4 }, { gpus: 8 }), true);
    assert.equal(usesAnyOf({ gpus: 0, cores: 4 }, { gpus: 8, memory_gib: 1 }), false);
  });

  it('isEmpty: nothing set or all zero', () => {
    assert.equal(isEmpty({}), true);
    assert.equal(isEmpty({ gpus: 0, cores: 0 }), true);
    assert.equal(isEmpty({ memory_gib: 0.5 }), false);
  });

  const formats = [
    { r: { gpus: 8, cores: 64, memory_gib: 512 }, text: '8 GPUs, 64 cores, 512 GiB' },
    { r: { gpus: 1 }, text: '1 GPU' },
    { r: { cores: 1, memory_gib: 0.5 }, text: '1 core, 0.5 GiB' },
    { r: { gpus: 4, cores: 0 }, text: '4 GPUs, 0 cores' },
    { r: {}, text: 'nothing' },
    { r: { gpus: 0, cores: 0, memory_gib: 0 }, text: 'nothing' },
  ];
  for (const c of formats) {
    it(`formatResources(${JSON.stringify(c.r)}) = ${c.text}`, () =>
      assert.equal(formatResources(c.r), c.text));
  }
});
