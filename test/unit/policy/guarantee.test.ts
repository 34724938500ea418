import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ScopeKey } from '../../../src/domain/scope.ts';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { borrowedByScope, protection } from '../../../src/policy/guarantee.ts';
import { holdings } from '../../../src/policy/holdings.ts';
import { buildView } from '../../../src/policy/view.ts';
import {
  cores,
  gpus,
  model,
  NOW,
  node,
  profile,
  quota,
  replica,
  SCOPES,
  spreadScene,
  withOwner,
  world,
} from './fixtures.ts';

const p = (g: number, c = 0) => profile(`g${g}c${c}`, c ? gpus(g, { cores: c }) : gpus(g));
const cpu = profile('cpu', cores(8));

/** One model per owner, replicas listed oldest first. */
function scene(
  owner: ScopeKey | null,
  sizes: ReturnType<typeof p>[],
  quotas = [quota('team:ml', gpus(8))],
): Snapshot {
  const m = model('m', sizes, { owner });
  return world({
    scopes: SCOPES,
    quotas,
    models: [m],
    nodes: [node('n', gpus(64, { cores: 512 }))],
    replicas: sizes.map((s, i) =>
      replica(`r${i}`, { model: 'm', profile: s, node: 'n' }, { created_at: NOW - 1000 + i }),
    ),
  });
}

const protectedBy = (s: Snapshot) => Object.fromEntries(protection(buildView(s)));

describe('protected and borrowed', () => {
  const cases: { name: string; s: Snapshot; want: Record<string, ScopeKey | null> }[] = [
    {
      name: 'a guarantee only on GPUs takes GPU replicas oldest first until full',
      s: scene('team:ml', [p(4), p(4), p(2)]),
      want: { r0: 'team:ml', r1: 'team:ml', r2: null },
    },
    {
      name: 'a guarantee only on GPUs never covers a CPU-only replica',
      s: scene('team:ml', [p(2), cpu]),
      want: { r0: 'team:ml', r1: null },
    },
    {
      name: 'a replica that does not fit is skipped, a later smaller one may still fit',
      s: scene('team:ml', [p(4), p(6), p(4)]),
      want: { r0: 'team:ml', r1: null, r2: 'team:ml' },
    },
    {
      name: 'multi-dimension: every set dimension must stay within',
      s: scene('team:ml', [p(4, 20), p(2, 20), p(2, 8)], [quota('team:ml', gpus(8, { cores: 32 }))]),
      want: { r0: 'team:ml', r1: null, r2: 'team:ml' },
    },
    {
      name: 'a guarantee above covers what the own guarantee does not',
      s: scene(
        'project:training',
        [p(2), p(2), p(8)],
        [quota('project:training', gpus(2)), quota('team:ml', gpus(4))],
      ),
      want: { r0: 'project:training', r1: 'team:ml', r2: null },
    },
    {
      name: 'each scope walks on its own: the org takes what the team skipped',
      s: scene('team:ml', [p(6), p(4)], [quota('team:ml', gpus(8)), quota('org:acme', gpus(16))]),
      want: { r0: 'team:ml', r1: 'org:acme' },
    },
    {
      name: 'guarantees nest: a project guaranteed 1,000 GPUs under a team guaranteed 8 protects at most 8',
      s: scene(
        'project:training',
        [p(4), p(4), p(4)],
        [quota('project:training', gpus(1000)), quota('team:ml', gpus(8))],
      ),
      want: { r0: 'project:training', r1: 'project:training', r2: null },
    },
    {
      name: 'a child guarantee on another dimension protects nothing its ancestor does not take',
      s: scene(
        'project:training',
        [p(4, 8), p(4, 8)],
        [quota('project:training', cores(100)), quota('team:ml', gpus(4))],
      ),
      want: { r0: 'project:training', r1: null },
    },
    {
      name: 'an ancestor whose guarantee the replica does not draw on does not cap it',
      s: scene(
        'project:training',
        [p(4), p(4)],
        [quota('project:training', gpus(8)), quota('team:ml', cores(8))],
      ),
      want: { r0: 'project:training', r1: 'project:training' },
    },
    {
      name: 'a model without owner is always borrowed',
      s: scene(null, [p(1)], [quota('team:ml', gpus(8)), quota('org:acme', gpus(8))]),
      want: { r0: null },
    },
    {
      name: 'an owner that names no scope counts toward the cluster only',
      s: scene('team:gone', [p(1)]),
      want: { r0: null },
    },
    {
      name: 'a guarantee of another branch covers nothing',
      s: scene('team:web', [p(1)]),
      want: { r0: null },
    },
  ];
  for (const c of cases) it(c.name, () => assert.deepEqual(protectedBy(c.s), c.want));

  it('ties in age go by replica ID', () => {
    const big = p(6);
    const s = world({
      scopes: SCOPES,
      quotas: [quota('team:ml', gpus(8))],
      models: [model('m', [big], { owner: 'team:ml' })],
      nodes: [node('n', gpus(16))],
      replicas: [
        replica('r-b', { model: 'm', profile: big, node: 'n' }, { created_at: NOW }),
        replica('r-a', { model: 'm', profile: big, node: 'n' }, { created_at: NOW }),
      ],
    });
    assert.deepEqual(protectedBy(s), { 'r-a': 'team:ml', 'r-b': null });
  });

  it('an owner change moves protection with the model (replayed on the new state)', () => {
    const s = scene('team:web', [p(2), p(2)]);
    assert.deepEqual(protectedBy(s), { r0: null, r1: null });
    assert.deepEqual(protectedBy(withOwner(s, 'm', 'project:serving')), { r0: 'team:ml', r1: 'team:ml' });
  });

  it('stopped and failed replicas hold nothing and are not walked; draining ones still hold', () => {
    const s = scene('team:ml', [p(4), p(4), p(4), p(4)]);
    s.replicas[0].state = 'stopped';
    s.replicas[1].state = 'failed';
    s.replicas[2].state = 'draining';
    const view = buildView(s);
    assert.deepEqual(Object.fromEntries(protection(view)), { r2: 'team:ml', r3: 'team:ml' });
    assert.deepEqual(holdings(view).get('team:ml'), { gpus: 8, cores: 0, memory_gib: 0 });
  });
});

describe('borrowed per scope', () => {
  it('borrowed(S) sums the borrowed replicas under S', () => {
    const borrowed = borrowedByScope(buildView(spreadScene()));
    assert.deepEqual(borrowed.get('project:training'), { gpus: 2, cores: 0, memory_gib: 0 });
    assert.deepEqual(borrowed.get('team:ml'), { gpus: 2, cores: 8, memory_gib: 0 });
    assert.deepEqual(borrowed.get('team:web'), { gpus: 0, cores: 0, memory_gib: 0 });
  });
});
