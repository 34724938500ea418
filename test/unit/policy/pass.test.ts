import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { decidePass } from '../../../src/policy/pass.ts';
import { AT_REST_RESYNCS } from '../../../src/policy/resync.ts';
import { buildView } from '../../../src/policy/view.ts';
import {
  cores,
  later,
  loadOf,
  memory,
  model,
  NOW,
  node,
  profile,
  replica,
  SECOND,
  windowOf,
  world,
} from './fixtures.ts';

const RESYNC_MS = 30_000;
const cpu = profile('cpu', cores(4), { default_concurrency: 8 });
const chat = model('chat', [cpu], { min_replicas: 1 });
const code = model('code', [cpu]);
const base = world({ models: [chat, code], nodes: [node('cpu-1', cores(64))] });
const of = (name: string) => ({ model: name, profile: cpu, node: 'cpu-1' });

describe('one pass of a model', () => {
  it('places as many replicas as its load asks for at once: the first, then the ones that follow', () => {
    const pass = decidePass(buildView(loadOf(base, 'chat', 30)), 'chat', memory(), RESYNC_MS);
    assert.equal(pass.decision.action, 'place');
    assert.deepEqual(
      pass.alsoPlace.map((d) => d.action),
      ['place', 'place', 'place'],
      '4 replicas of 8 for 30 in flight',
    );
  });

  it("starts the model's reserved replicas, and only those", () => {
    const replicas = [
      replica('chat-1', of('chat'), { state: 'pending' }),
      replica('chat-2', of('chat'), { state: 'starting' }),
      replica('chat-3', of('chat'), { state: 'ready' }),
      replica('code-1', of('code'), { state: 'pending' }),
    ];
    const pass = decidePass(buildView({ ...loadOf(base, 'chat', 6), replicas }), 'chat', memory(), RESYNC_MS);
    assert.deepEqual(pass.startable, ['chat-1']);
  });

  it("carries the decision's scale-down window and the backoff it was given to the next pass", () => {
    const replicas = [replica('chat-1', of('chat')), replica('chat-2', of('chat'))];
    const backoff = { cpu: NOW + 60 * SECOND };
    const quiet = { ...loadOf(base, 'chat', 1), replicas };
    const first = decidePass(buildView(quiet), 'chat', memory(null, backoff), RESYNC_MS);
    assert.equal(first.decision.action, 'none');
    assert.deepEqual(windowOf(first.memory), memory(NOW, backoff), 'the window opens now');
    const next = decidePass(buildView(later(quiet, 10 * SECOND)), 'chat', first.memory, RESYNC_MS);
    assert.deepEqual(windowOf(next.memory), memory(NOW, backoff), 'and stays open');
    const loaded = decidePass(
      buildView(loadOf(later(quiet, 20 * SECOND), 'chat', 12)),
      'chat',
      next.memory,
      RESYNC_MS,
    );
    assert.deepEqual(
      windowOf(loaded.memory),
      memory(null, backoff),
      'a load that breaks the condition closes it',
    );
  });

  it('waits longer for its next pass at rest', () => {
    assert.equal(
      decidePass(buildView(base), 'code', memory(), RESYNC_MS).resyncMs,
      RESYNC_MS * AT_REST_RESYNCS,
    );
    assert.equal(decidePass(buildView(base), 'chat', memory(), RESYNC_MS).resyncMs, RESYNC_MS);
  });
});
