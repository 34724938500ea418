import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Quota } from '../../../src/domain/quota.ts';
import type { Resources } from '../../../src/domain/resources.ts';
import { limitSentence } from '../../../src/policy/explain.ts';
import { blockingLimit, overLimitDimensions } from '../../../src/policy/limits.ts';
import { buildView } from '../../../src/policy/view.ts';
import { cores, gpus, model, node, profile, quota, replica, SCOPES, world } from './fixtures.ts';

const held = profile('held', gpus(14, { cores: 40 }));
const scene = (quotas: Quota[]) =>
  buildView(
    world({
      scopes: SCOPES,
      quotas,
      models: [model('m', [held], { owner: 'project:training' })],
      nodes: [node('n', gpus(64, { cores: 512 }))],
      replicas: [replica('r', { model: 'm', profile: held, node: 'n' })],
    }),
  );

describe('limits', () => {
  const cases: { name: string; quotas: Quota[]; r: Resources; want: string | null }[] = [
    { name: 'no limit anywhere', quotas: [], r: gpus(4), want: null },
    { name: 'under the limit', quotas: [quota('team:ml', undefined, gpus(18))], r: gpus(4), want: null },
    {
      name: 'a limit above the owner blocks',
      quotas: [quota('team:ml', undefined, gpus(16))],
      r: gpus(4),
      want: 'limit of team Acme / ml: holds 14 GPUs + 4 > 16',
    },
    {
      name: 'the nearest blocking scope is named',
      quotas: [quota('org:acme', undefined, gpus(10)), quota('project:training', undefined, gpus(15))],
      r: gpus(4),
      want: 'limit of project Acme/ml/training: holds 14 GPUs + 4 > 15',
    },
    {
      name: 'multi-dimension: a limit on cores stops a replica that fits the GPUs',
      quotas: [quota('org:acme', undefined, gpus(64, { cores: 42 }))],
      r: gpus(1, { cores: 4 }),
      want: 'limit of org Acme: holds 40 cores + 4 > 42',
    },
    {
      name: 'a dimension the limit does not set never blocks',
      quotas: [quota('org:acme', undefined, { memory_gib: 1 })],
      r: cores(400),
      want: null,
    },
    {
      name: 'a limit lowered below what is held blocks any new replica using that dimension',
      quotas: [quota('team:ml', undefined, gpus(8))],
      r: gpus(1),
      want: 'limit of team Acme / ml: holds 14 GPUs + 1 > 8',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const view = scene(c.quotas);
      const block = blockingLimit(view, 'project:training', c.r);
      assert.equal(block && limitSentence(view, block, c.r), c.want);
    });
  }

  it('a model without owner meets no limit', () => {
    assert.equal(blockingLimit(scene([quota('org:acme', undefined, gpus(0))]), null, gpus(8)), null);
  });
});

describe('a limit kept by a preemption reads as kept (issue 37)', () => {
  // Org Acme is limited to 4 GPUs; train preempted one of serve's 2-GPU replicas and waits beside it.
  const g2 = profile('g2', gpus(2));
  const cpu = profile('cpu', cores(8));
  const view = buildView(
    world({
      scopes: SCOPES,
      quotas: [quota('org:acme', undefined, gpus(4))],
      models: [
        model('train', [g2], { owner: 'project:training' }),
        model('serve', [g2, cpu], { owner: 'project:serving' }),
      ],
      nodes: [node('n', gpus(8, { cores: 64 }))],
      replicas: [
        replica('s1', { model: 'serve', profile: g2, node: 'n' }),
        {
          ...replica('s2', { model: 'serve', profile: g2, node: 'n' }, { state: 'draining' }),
          preempted_for: 'train',
          reclaimed_for: 't1',
        },
        replica('t1', { model: 'train', profile: g2, node: 'n' }, { state: 'pending' }),
      ],
    }),
  );

  it('no scope is over: scale-down puts no dimension first for a phantom', () => {
    assert.deepEqual([...overLimitDimensions(view, 'project:serving')], []);
  });

  it('a CPU-only replica passes a limit on GPUs alone; another GPU replica does not', () => {
    assert.equal(blockingLimit(view, 'project:serving', cores(8)), null);
    assert.equal(blockingLimit(view, 'project:serving', gpus(1))?.scope, 'org:acme');
  });
});
