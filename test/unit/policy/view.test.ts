import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildView, viewOf } from '../../../src/policy/view.ts';
import { gpus, model, node, profile, replica, SCOPES, world } from './fixtures.ts';

describe('view', () => {
  const p4 = profile('p4', gpus(4, { cores: 16 }));
  const s = world({
    scopes: SCOPES,
    models: [model('m', [p4], { owner: 'project:training' })],
    nodes: [node('gpu-1', gpus(8, { cores: 64, memory_gib: 512 })), node('cpu-1', { cores: 32 })],
    replicas: [
      replica('old', { model: 'm', profile: p4, node: 'gpu-1' }, { state: 'draining' }),
      replica('gone', { model: 'm', profile: p4, node: 'gpu-1' }, { state: 'stopped' }),
      replica('new', { model: 'm', profile: p4, node: 'gpu-1' }, { state: 'pending' }),
      replica('newer', { model: 'm', profile: p4, node: 'gpu-1' }, { state: 'pending' }),
    ],
  });
  const view = buildView(s);

  it('chains a scope up to its org; no owner or an unknown one has none', () => {
    assert.deepEqual(view.chain('project:training'), ['project:training', 'team:ml', 'org:acme']);
    assert.deepEqual(view.chain('org:acme'), ['org:acme']);
    assert.deepEqual(view.chain(null), []);
    assert.deepEqual(view.chain('team:nope'), []);
  });

  it('names scopes the way people do', () => {
    assert.equal(view.displayName('org:acme'), 'Acme');
    assert.equal(view.displayName('team:ml'), 'Acme / ml');
    assert.equal(view.displayName('project:training'), 'Acme/ml/training');
  });

  it('indexes active replicas oldest first, per model and per node', () => {
    assert.deepEqual(
      view.replicasOfModel('m').map((r) => r.id),
      ['old', 'new', 'newer'],
    );
    assert.deepEqual(
      view.replicasOnNode('gpu-1').map((r) => r.id),
      ['old', 'new', 'newer'],
    );
    assert.deepEqual(view.replicasOnNode('cpu-1'), []);
  });

  it('free room is capacity minus active replicas on every dimension, negative while victims drain', () => {
    assert.deepEqual(view.free('gpu-1'), { gpus: -4, cores: 16, memory_gib: 512 });
    assert.deepEqual(view.free('cpu-1'), { gpus: 0, cores: 32, memory_gib: 0 });
  });

  it('viewOf keeps a view and indexes a snapshot', () => {
    assert.equal(viewOf(view), view);
    assert.notEqual(viewOf(s), view);
  });
});
