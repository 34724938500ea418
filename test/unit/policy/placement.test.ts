import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterNode, Replica } from '../../../src/domain/cluster.ts';
import type { Profile } from '../../../src/domain/model.ts';
import { hostsOf, pickNode } from '../../../src/policy/placement.ts';
import { buildView } from '../../../src/policy/view.ts';
import { cores, gpus, model, node, profile, replica, world } from './fixtures.ts';

const one = profile('one', gpus(1, { cores: 4 }));
const filler = (id: string, on: string, p: Profile = one): Replica =>
  replica(id, { model: 'other', profile: p, node: on });

describe('placement', () => {
  const cases: {
    name: string;
    nodes: ClusterNode[];
    replicas?: Replica[];
    p: Profile;
    want: string | null;
  }[] = [
    {
      name: 'best fit: the GPU node left with the fewest free GPUs',
      nodes: [
        node('a', gpus(8, { cores: 64 })),
        node('b', gpus(4, { cores: 64 })),
        node('c', gpus(8, { cores: 64 })),
      ],
      replicas: [filler('x', 'c'), filler('y', 'c')],
      p: profile('two', gpus(2)),
      want: 'b',
    },
    {
      name: 'a cordoned node takes nothing new',
      nodes: [node('a', gpus(1), { state: 'cordoned' }), node('b', gpus(8))],
      p: profile('g', gpus(1)),
      want: 'b',
    },
    {
      name: 'a down node takes nothing',
      nodes: [node('a', gpus(8), { state: 'down' })],
      p: profile('g', gpus(1)),
      want: null,
    },
    {
      name: 'the GPU model must match when the profile sets one',
      nodes: [node('a', gpus(1), { gpu_model: 'A100' }), node('b', gpus(8), { gpu_model: 'H100' })],
      p: profile('h', gpus(1), { gpu_model: 'H100' }),
      want: 'b',
    },
    {
      name: 'gpu_model mismatch everywhere: no headroom',
      nodes: [node('a', gpus(8), { gpu_model: 'A100' })],
      p: profile('h', gpus(1), { gpu_model: 'H100' }),
      want: null,
    },
    {
      name: 'CPU-only replicas go to nodes without GPUs first',
      nodes: [node('gpu', gpus(8, { cores: 8 })), node('cpu', cores(64))],
      p: profile('c', cores(8)),
      want: 'cpu',
    },
    {
      name: 'CPU-only replicas take a GPU node when no GPU-less node fits',
      nodes: [node('gpu', gpus(8, { cores: 64 })), node('cpu', cores(4))],
      p: profile('c', cores(8)),
      want: 'gpu',
    },
    {
      name: 'among GPU-less nodes, best fit on cores',
      nodes: [node('big', cores(64)), node('small', cores(16))],
      p: profile('c', cores(8)),
      want: 'small',
    },
    {
      name: 'a node without a dimension has none of it',
      nodes: [node('cpu', cores(64))],
      p: profile('g', gpus(1)),
      want: null,
    },
    {
      name: 'room held by active replicas (draining too) is not free',
      nodes: [node('a', gpus(1, { cores: 4 }))],
      replicas: [replica('d', { model: 'other', profile: one, node: 'a' }, { state: 'draining' })],
      p: one,
      want: null,
    },
    {
      name: 'ties go by node name',
      nodes: [node('b', gpus(8)), node('a', gpus(8))],
      p: profile('g', gpus(1)),
      want: 'a',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const view = buildView(
        world({ nodes: c.nodes, replicas: c.replicas ?? [], models: [model('other', [one])] }),
      );
      assert.equal(pickNode(view, c.p), c.want);
    });
  }
});

describe('hostsOf', () => {
  const view = buildView(
    world({
      nodes: [
        node('a', gpus(8), { gpu_model: 'A100' }),
        node('h', gpus(8), { gpu_model: 'H100' }),
        node('cordoned', gpus(8), { gpu_model: 'H100', state: 'cordoned' }),
        node('cpu', cores(64)),
      ],
    }),
  );
  const names = (p: Profile) => hostsOf(view, p).map((n) => n.name);
  it('the ready nodes with the GPU model the profile asks for', () => {
    assert.deepEqual(names(profile('h', gpus(1), { gpu_model: 'H100' })), ['h']);
  });
  it('every ready node when the profile asks for none, in the view order', () => {
    assert.deepEqual(names(profile('any', gpus(1))), ['a', 'h', 'cpu']);
  });
  it('no node for a GPU model the cluster lacks', () => {
    assert.deepEqual(names(profile('b', gpus(1), { gpu_model: 'B200' })), []);
  });
});
