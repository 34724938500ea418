// An agent token's bounds (src/policy/node-bounds.ts): each way a declaration goes beyond them, with its
// sentence; and, as a property, a declaration is within its bounds exactly when it is at most the
// bound on each dimension, names the bound's GPU model or none, and only the bound's labels.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { NodeBounds } from '../../../src/domain/node-grant.ts';
import { DIMENSIONS } from '../../../src/domain/resources.ts';
import { beyondBounds, breachSentence, type NodeDeclaration } from '../../../src/policy/node-bounds.ts';

const BOUNDS: NodeBounds = {
  capacity: { gpus: 8, cores: 96 },
  gpu_model: 'H100',
  labels: { zone: 'a' },
};

describe("an agent token's bounds", () => {
  const cases: [string, NodeDeclaration, string | null][] = [
    [
      'exactly the bounds',
      { capacity: { gpus: 8, cores: 96 }, gpu_model: 'H100', labels: { zone: 'a' } },
      null,
    ],
    ['less, and no GPU model nor label', { capacity: { gpus: 1 } }, null],
    [
      '1,000 GPUs',
      { capacity: { gpus: 1000 } },
      'the agent token of node n allows at most 8 GPUs, not 1000 GPUs',
    ],
    [
      'memory the bound leaves out',
      { capacity: { memory_gib: 1 } },
      'the agent token of node n allows at most 0 GiB, not 1 GiB',
    ],
    [
      'another GPU model',
      { capacity: {}, gpu_model: 'B200' },
      'the agent token of node n allows the GPU model H100 only, not B200',
    ],
    [
      'a label it lacks',
      { capacity: {}, labels: { tier: 'gold' } },
      'the agent token of node n allows no label tier',
    ],
    [
      'a label of another value',
      { capacity: {}, labels: { zone: 'b' } },
      'the agent token of node n allows the label zone=a only, not zone=b',
    ],
  ];
  for (const [what, declared, sentence] of cases) {
    it(`${what}: ${sentence ?? 'within'}`, () => {
      const breach = beyondBounds(declared, BOUNDS);
      assert.equal(breach && breachSentence('n', breach), sentence);
    });
  }

  it('a GPU model where the bounds give none', () => {
    const breach = beyondBounds({ capacity: {}, gpu_model: 'H100' }, { capacity: { gpus: 1 } });
    assert.equal(
      breach && breachSentence('n', breach),
      'the agent token of node n allows no GPU model, not H100',
    );
  });

  it('within exactly when no dimension, GPU model or label goes beyond (property)', () => {
    const amounts = fc.record(
      { gpus: fc.nat(16), cores: fc.nat(128), memory_gib: fc.nat(1024) },
      { requiredKeys: [] },
    );
    const models = fc.option(fc.constantFrom('H100', 'A100'), { nil: undefined });
    const labels = fc.option(fc.dictionary(fc.constantFrom('zone', 'rack'), fc.constantFrom('a', 'b')), {
      nil: undefined,
    });
    fc.assert(
      fc.property(
        amounts,
        models,
        labels,
        amounts,
        models,
        labels,
        (cap, gpu, lab, bound, boundGpu, boundLab) => {
          const declared: NodeDeclaration = { capacity: cap, gpu_model: gpu, labels: lab };
          const bounds: NodeBounds = { capacity: bound, gpu_model: boundGpu, labels: boundLab };
          const within =
            DIMENSIONS.every((d) => (cap[d] ?? 0) <= (bound[d] ?? 0)) &&
            (gpu === undefined || gpu === boundGpu) &&
            Object.entries(lab ?? {}).every(([key, value]) => boundLab?.[key] === value);
          assert.equal(beyondBounds(declared, bounds) === null, within);
        },
      ),
    );
  });
});
