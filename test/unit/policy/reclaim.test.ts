import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ClusterNode, Replica } from '../../../src/domain/cluster.ts';
import type { Model } from '../../../src/domain/model.ts';
import type { Quota } from '../../../src/domain/quota.ts';
import { nextClaim } from '../../../src/policy/claims.ts';
import { planReclaim, reclaimingScope } from '../../../src/policy/reclaim.ts';
import { buildView } from '../../../src/policy/view.ts';
import { cores, gpus, model, node, org, profile, quota, replica, SCOPES, world } from './fixtures.ts';

const scopes = [...SCOPES, org('gamma', 'Gamma')];
const g2 = profile('g2', gpus(2));
const g4 = profile('g4', gpus(4));
const g8 = profile('g8', gpus(8));
const mine = model('mine', [g4], { owner: 'team:ml' });
const web = model('web', [g2, g4, g8], { owner: 'team:web' });
const small = model('small', [g2], { owner: 'org:gamma' });
const on = (id: string, m: Model, p: typeof g2, n: string, state: Replica['state'] = 'ready') =>
  replica(id, { model: m.name, profile: p, node: n }, { state });

function plan(
  nodes: ClusterNode[],
  replicas: Replica[],
  quotas: Quota[] = [quota('team:ml', gpus(8))],
  who = mine,
) {
  const view = buildView(world({ scopes, quotas, models: [mine, web, small, who], nodes, replicas }));
  const serving = view.replicasOfModel(who.name).filter((r) => r.state !== 'draining').length;
  const result = planReclaim(view, who, who.profiles[0], nextClaim(who, serving));
  return result && { node: result.node, victims: result.victims.map((v) => v.replica), for: result.for };
}

describe('reclaim', () => {
  it('takes two victims when one does not free enough (newest first)', () => {
    const replicas = [
      on('w1', web, g2, 'n1'),
      on('w2', web, g2, 'n1'),
      on('w3', web, g2, 'n1'),
      on('w4', web, g2, 'n1'),
    ];
    assert.deepEqual(plan([node('n1', gpus(8))], replicas), {
      node: 'n1',
      victims: ['w4', 'w3'],
      for: 'team:ml',
    });
  });

  it('chooses the node where the fewest victims free enough room', () => {
    const replicas = [
      ...['a', 'b', 'c', 'd'].map((id) => on(id, web, g2, 'n1')),
      on('e', web, g4, 'n2'),
      on('f', web, g4, 'n2'),
    ];
    assert.deepEqual(plan([node('n1', gpus(8)), node('n2', gpus(8))], replicas)?.victims, ['f']);
  });

  it('then the node where the victims hold the least', () => {
    const replicas = [on('big', web, g8, 'n1'), on('own', mine, g4, 'n2'), on('w', web, g4, 'n2')];
    // `own` sits within ml's guarantee (4 of 8), `w` is borrowed: one victim of 4 GPUs beats one of 8.
    assert.deepEqual(plan([node('n1', gpus(8)), node('n2', gpus(8))], replicas)?.victims, ['w']);
  });

  it('takes victims of the owner that borrows most first', () => {
    const replicas = [
      on('w-old', web, g2, 'n1'),
      on('w-mid', web, g2, 'n1'),
      on('s', small, g2, 'n1'),
      on('w-far', web, g8, 'n2'),
    ];
    // web borrows 12 GPUs, gamma 2: web's newest on n1 goes although gamma's replica is newer.
    assert.deepEqual(
      plan(
        [node('n1', gpus(6)), node('n2', gpus(8))],
        replicas,
        undefined,
        model('two', [g2], { owner: 'team:ml' }),
      )?.victims,
      ['w-mid'],
    );
  });

  it('no victim possible when only protected replicas run: null', () => {
    const replicas = [on('w1', web, g4, 'n1'), on('w2', web, g4, 'n1')];
    const quotas = [quota('team:ml', gpus(8)), quota('org:beta', gpus(8))];
    assert.equal(plan([node('n1', gpus(8))], replicas, quotas), null);
  });

  it('never reclaims the model’s own replicas, even borrowed ones', () => {
    const both = model('both', [profile('gpu', gpus(1, { cores: 8 })), profile('cpu', cores(8))], {
      owner: 'team:ml',
    });
    const cpu = both.profiles[1];
    const replicas = [on('own1', both, cpu, 'n1'), on('own2', both, cpu, 'n1')];
    assert.equal(plan([node('n1', gpus(8, { cores: 16 }))], replicas, undefined, both), null);
    const other = replica('other', { model: 'web', profile: profile('cpu', cores(8)), node: 'n1' });
    assert.deepEqual(
      plan([node('n1', gpus(8, { cores: 16 }))], [replicas[0], other], undefined, both)?.victims,
      ['other'],
    );
  });

  it('a scope beyond its guarantee never reclaims', () => {
    const replicas = [on('m1', mine, g4, 'n1'), on('m2', mine, g4, 'n1'), on('w', web, g8, 'n2')];
    assert.equal(plan([node('n1', gpus(8)), node('n2', gpus(8))], replicas), null);
  });

  it('skips cordoned nodes and GPU model mismatches', () => {
    const h100 = model('h100', [profile('h', gpus(4), { gpu_model: 'H100' })], { owner: 'team:ml' });
    const nodes = [
      node('cordoned', gpus(4), { gpu_model: 'H100', state: 'cordoned' }),
      node('a100', gpus(4), { gpu_model: 'A100' }),
      node('ok', gpus(4), { gpu_model: 'H100' }),
    ];
    const replicas = [on('c', web, g4, 'cordoned'), on('a', web, g4, 'a100'), on('k', web, g4, 'ok')];
    assert.deepEqual(plan(nodes, replicas, undefined, h100), { node: 'ok', victims: ['k'], for: 'team:ml' });
  });

  describe('counts the room draining replicas free (issue 11: no victim it does not need)', () => {
    const g1 = profile('g1', gpus(1));
    const one = model('one', [g1], { owner: 'team:ml' });
    it('a draining replica is never a victim again, and a node it frees enough needs no victim', () => {
      const replicas = [on('d', web, g2, 'n', 'draining'), on('w1', web, g2, 'n'), on('w2', web, g2, 'n')];
      assert.deepEqual(plan([node('n', gpus(6))], replicas)?.victims, ['w2']);
      assert.deepEqual(
        plan([node('n', gpus(6))], replicas, undefined, model('two', [g2], { owner: 'team:ml' })),
        {
          node: 'n',
          victims: [],
          for: 'team:ml',
        },
      );
    });
    it('the room another reclaim reserved stays reserved: one victim for one GPU, not two', () => {
      // n is 4 GPUs: `d` drains for the pending `r` that a reclaim reserved; w1 and w2 run.
      const replicas = [
        on('d', web, g2, 'n', 'draining'),
        on('r', small, g2, 'n', 'pending'),
        on('w1', web, g1, 'n'),
        on('w2', web, g1, 'n'),
      ];
      assert.deepEqual(plan([node('n', gpus(4))], replicas, undefined, one)?.victims, ['w2']);
    });
    it('drops a victim that a later, larger one makes spare', () => {
      // Newest first takes the 2-GPU replica, which is not enough; the 4-GPU one alone then is.
      const replicas = [on('big', web, g4, 'n'), on('little', web, g2, 'n')];
      assert.deepEqual(plan([node('n', gpus(6))], replicas)?.victims, ['big']);
    });
  });

  it('never takes a replica not yet started: it may stand on room its own victims still hold', () => {
    // w-new is pending where a preemption reserved it; taking it would undo that preemption, in turns.
    const replicas = [on('w-old', web, g2, 'n1'), on('w-new', web, g2, 'n1', 'pending')];
    assert.equal(plan([node('n1', gpus(4))], replicas), null);
    const started = [on('w-old', web, g2, 'n1'), on('w-new', web, g2, 'n1', 'starting')];
    assert.deepEqual(plan([node('n1', gpus(4))], started)?.victims, ['w-new', 'w-old']);
  });

  it('takes only victims that free a dimension still short', () => {
    const need = model('need', [profile('p', gpus(2, { cores: 4 }))], { owner: 'team:ml' });
    const replicas = [
      replica('gpu-user', { model: 'web', profile: profile('x', gpus(2)), node: 'n' }),
      replica('cpu-user', { model: 'web', profile: profile('y', cores(60)), node: 'n' }),
    ];
    // Cores are free enough (64 - 60 = 4); only the GPU user stands in the way.
    assert.deepEqual(plan([node('n', gpus(2, { cores: 64 }))], replicas, undefined, need)?.victims, [
      'gpu-user',
    ]);
  });

  describe('within its guarantee', () => {
    const view = (quotas: Quota[], replicas: Replica[] = []) =>
      buildView(world({ scopes, quotas, models: [mine, web], nodes: [node('n', gpus(64))], replicas }));
    it('the nearest scope whose guarantee the new replica fits', () => {
      const v = view([quota('project:training', gpus(2)), quota('team:ml', gpus(8))]);
      assert.equal(reclaimingScope(v, 'project:training', gpus(2)), 'project:training');
      assert.equal(reclaimingScope(v, 'project:training', gpus(4)), 'team:ml');
      assert.equal(reclaimingScope(v, 'project:training', gpus(9)), null);
    });
    it('the replica must use a dimension the guarantee sets', () => {
      assert.equal(reclaimingScope(view([quota('team:ml', cores(32))]), 'team:ml', gpus(1)), null);
    });
    it('holds count: a sibling project’s replicas fill the team’s guarantee', () => {
      const sibling = model('sib', [g4], { owner: 'project:serving' });
      const v = buildView(
        world({
          scopes,
          quotas: [quota('team:ml', gpus(8))],
          models: [sibling],
          nodes: [node('n', gpus(64))],
          replicas: [on('s1', sibling, g4, 'n'), on('s2', sibling, g4, 'n')],
        }),
      );
      assert.equal(reclaimingScope(v, 'project:training', gpus(1)), null);
    });
    it('guarantees nest: a project within its own but its team beyond its guarantee is not within', () => {
      const grab = model('grab', [g4], { owner: 'project:training' });
      const v = buildView(
        world({
          scopes,
          quotas: [quota('project:training', gpus(1000)), quota('team:ml', gpus(8))],
          models: [grab],
          nodes: [node('n', gpus(64))],
          replicas: [on('g1', grab, g4, 'n'), on('g2', grab, g4, 'n')],
        }),
      );
      assert.equal(reclaimingScope(v, 'project:training', gpus(4)), null);
      assert.equal(
        reclaimingScope(v, 'project:training', gpus(0, { cores: 1 })),
        null,
        'uses no guaranteed dimension',
      );
    });
    it('no owner, no guarantee', () =>
      assert.equal(reclaimingScope(view([quota('team:ml', gpus(8))]), null, gpus(1)), null));
  });
});
