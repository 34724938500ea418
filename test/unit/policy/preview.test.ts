import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { previewQuota } from '../../../src/policy/preview.ts';
import { gpus, model, node, profile, quota, replica, SCOPES, world } from './fixtures.ts';

const g2 = profile('g2', gpus(2));
const chat = model('chat', [g2], { owner: 'project:training' });
const web = model('web', [g2], { owner: 'org:beta' });
const s = world({
  scopes: SCOPES,
  quotas: [quota('team:ml', gpus(4), gpus(16))],
  models: [chat, web],
  nodes: [node('n', gpus(16))],
  replicas: [
    replica('c1', { model: 'chat', profile: g2, node: 'n' }),
    replica('c2', { model: 'chat', profile: g2, node: 'n' }),
    replica('c3', { model: 'chat', profile: g2, node: 'n' }),
    replica('w1', { model: 'web', profile: g2, node: 'n' }),
  ],
});

describe('quota preview', () => {
  it('a smaller guarantee leaves replicas borrowed and reclaimable', () => {
    assert.deepEqual(previewQuota(s, quota('team:ml', gpus(2), gpus(16))), {
      became_borrowed: ['c2'],
      became_protected: [],
      reclaimable: [
        { replica: 'c2', model: 'chat', resources: gpus(2) },
        { replica: 'c3', model: 'chat', resources: gpus(2) },
      ],
      blocked_models: [],
      priority: { value: 0, above: [], equal: [], below: [] },
    });
  });

  it("a priority names the siblings it would be above, equal to and below (a team's: its org's teams and models)", () => {
    const withSiblings = {
      ...s,
      scopes: [
        ...s.scopes,
        {
          key: 'team:ops' as const,
          kind: 'team' as const,
          id: 'ops',
          name: 'ops',
          parent: 'org:acme' as const,
        },
      ],
      quotas: [...s.quotas, { scope: 'team:ops' as const, priority: 7 }],
      models: [
        ...s.models,
        model('acme-wide', [g2], { owner: 'org:acme', priority: 2 }),
        model('other', [g2], { owner: 'org:acme' }),
      ],
    };
    assert.deepEqual(
      previewQuota(withSiblings, { ...quota('team:ml', gpus(4), gpus(16)), priority: 2 }).priority,
      {
        value: 2,
        above: ['team Acme / ops (7)'],
        equal: ['model acme-wide (2)'],
        below: ['model other (0)'],
      },
    );
  });

  it("an org's siblings are the other orgs and the models without owner", () => {
    const free = model('free', [g2], { priority: -1 });
    assert.deepEqual(
      previewQuota({ ...s, models: [...s.models, free] }, { scope: 'org:acme', priority: 1 }).priority,
      {
        value: 1,
        above: [],
        equal: [],
        below: ['model free (-1)', 'org Beta (0)'],
      },
    );
  });

  it('a larger guarantee protects more', () => {
    const preview = previewQuota(s, quota('team:ml', gpus(8)));
    assert.deepEqual(preview.became_protected, ['c3']);
    assert.deepEqual(preview.reclaimable, []);
  });

  it('a guarantee on another branch protects its replicas', () => {
    assert.deepEqual(previewQuota(s, quota('org:beta', gpus(2))).became_protected, ['w1']);
  });

  it('a lower limit names the models it would block, with the sentence', () => {
    assert.deepEqual(previewQuota(s, quota('team:ml', gpus(4), gpus(6))).blocked_models, [
      { model: 'chat', why: 'limit of team Acme / ml: holds 6 GPUs + 2 > 6' },
    ]);
  });

  it('a blocked model says which replicas of a lower claim it would preempt', () => {
    const floor = model('floor', [g2], { owner: 'project:serving', min_replicas: 1 });
    const withFloor = {
      ...s,
      models: [chat, web, floor],
      load: { chat: { in_flight: 0, waiting: 0, reported_at: s.now } },
    };
    assert.deepEqual(previewQuota(withFloor, quota('team:ml', gpus(4), gpus(6))).blocked_models, [
      { model: 'chat', why: 'limit of team Acme / ml: holds 6 GPUs + 2 > 6' },
      {
        model: 'floor',
        why: 'limit of team Acme / ml: holds 6 GPUs + 2 > 6, but it may preempt c3 (priority 0, surplus)',
        preempts: ['c3 (priority 0, surplus)'],
      },
    ]);
  });

  it('a model the old limit already blocked is not news', () => {
    const tight = { ...s, quotas: [quota('team:ml', gpus(4), gpus(6))] };
    assert.deepEqual(previewQuota(tight, quota('team:ml', gpus(4), gpus(5))).blocked_models, []);
  });

  it('changes nothing', () => {
    const before = structuredClone(s);
    previewQuota(s, quota('team:ml', undefined, gpus(1)));
    assert.deepEqual(s, before);
  });
});
