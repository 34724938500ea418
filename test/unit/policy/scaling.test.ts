// When a model asks for one more replica (POLICY.md "Scaling a model"): upTrigger over named cases.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Model } from '../../../src/domain/model.ts';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { loadOf } from '../../../src/policy/load.ts';
import { modelFigures } from '../../../src/policy/model-figures.ts';
import { type UpTrigger, upTrigger } from '../../../src/policy/scaling.ts';
import { buildView } from '../../../src/policy/view.ts';
import { chat, chatScene, h100, replicaOn, SECOND, threeChatReplicas } from './fixtures.ts';

const trigger = (s: Snapshot): UpTrigger | null => {
  const view = buildView(s);
  const model = view.models.get('chat')!;
  return upTrigger(model, modelFigures(view, model), loadOf(view, 'chat'));
};
const withChat = (spec: Partial<Model>) => ({ models: [{ ...chat, ...spec }] });
const onTheirWay = [...threeChatReplicas(), replicaOn('r4', h100, 'gpu-2', 'pending')];

describe('upTrigger: why a replica is added', () => {
  const cases: Record<string, { s: Snapshot; want: UpTrigger | null }> = {
    'fewer than min_replicas, whatever the load': {
      s: chatScene({ inFlight: 0, replicas: [], ...withChat({ min_replicas: 2 }) }),
      want: { why: 'scale up: 0 replicas < min_replicas 2', measuredOnly: false },
    },
    'fewer than min_replicas comes first, before the load': {
      s: chatScene({ inFlight: 100, ...withChat({ min_replicas: 4 }) }),
      want: { why: 'scale up: 3 replicas < min_replicas 4', measuredOnly: false },
    },
    'min_replicas holds on unknown load': {
      s: chatScene({ inFlight: 0, loadAge: 90 * SECOND, ...withChat({ min_replicas: 4 }) }),
      want: { why: 'scale up: 3 replicas < min_replicas 4', measuredOnly: false },
    },
    'load above the capacity at SLO': {
      s: chatScene({ inFlight: 31 }),
      want: { why: 'scale up: 31 in flight > 30 at SLO on 3 replicas', measuredOnly: false },
    },
    'load at the capacity: nothing': { s: chatScene({ inFlight: 30 }), want: null },
    'any load and no replica': {
      s: chatScene({ inFlight: 1, replicas: [] }),
      want: { why: 'scale up: 1 in flight and no replica', measuredOnly: false },
    },
    'no load and no replica: nothing': { s: chatScene({ inFlight: 0, replicas: [] }), want: null },
    'unknown load never asks (reported 61 s ago)': {
      s: chatScene({ inFlight: 100, loadAge: 61 * SECOND }),
      want: null,
    },
    'a report exactly as old as the staleness bound still counts': {
      s: chatScene({ inFlight: 31, loadAge: 60 * SECOND }),
      want: { why: 'scale up: 31 in flight > 30 at SLO on 3 replicas', measuredOnly: false },
    },
    'draining replicas add no capacity': {
      s: chatScene({
        inFlight: 31,
        replicas: [...threeChatReplicas(), replicaOn('old', h100, 'gpu-3', 'draining')],
      }),
      want: { why: 'scale up: 31 in flight > 30 at SLO on 3 replicas', measuredOnly: false },
    },
    'measured throughput below the target, at low load: only a measured profile can help': {
      s: chatScene({ inFlight: 1, ...withChat({ target_tokens_per_sec: 3500 }) }),
      want: { why: 'scale up: 3000 tokens/s < target 3500 tokens/s on 3 replicas', measuredOnly: true },
    },
    'the target met: nothing': {
      s: chatScene({ inFlight: 1, ...withChat({ target_tokens_per_sec: 3000 }) }),
      want: null,
    },
    'the load asks before the target': {
      s: chatScene({ inFlight: 31, ...withChat({ target_tokens_per_sec: 3500 }) }),
      want: { why: 'scale up: 31 in flight > 30 at SLO on 3 replicas', measuredOnly: false },
    },
    'the target asks on unknown load': {
      s: chatScene({ inFlight: 1, loadAge: 90 * SECOND, ...withChat({ target_tokens_per_sec: 3500 }) }),
      want: { why: 'scale up: 3000 tokens/s < target 3500 tokens/s on 3 replicas', measuredOnly: true },
    },
    'max_replicas is not this rule’s to check': {
      s: chatScene({ inFlight: 31, ...withChat({ max_replicas: 3 }) }),
      want: { why: 'scale up: 31 in flight > 30 at SLO on 3 replicas', measuredOnly: false },
    },
  };
  for (const [name, c] of Object.entries(cases)) it(name, () => assert.deepEqual(trigger(c.s), c.want));
});

describe('upTrigger does not flap: a replica on its way is not asked for twice', () => {
  const cases: Record<string, Snapshot> = {
    'the load that asked for it, with the replica pending': chatScene({ inFlight: 31, replicas: onTheirWay }),
    'the load up to the capacity the replica brings': chatScene({ inFlight: 40, replicas: onTheirWay }),
    'the target that asked for it, with the replica starting': chatScene({
      inFlight: 1,
      replicas: onTheirWay.map((r) => (r.id === 'r4' ? { ...r, state: 'starting' as const } : r)),
      ...withChat({ target_tokens_per_sec: 3500 }),
    }),
    'min_replicas that asked for it, with the replica pending': chatScene({
      replicas: onTheirWay,
      ...withChat({ min_replicas: 4 }),
    }),
  };
  for (const [name, s] of Object.entries(cases)) it(name, () => assert.equal(trigger(s), null));

  it('past the capacity the replica brings, one more is asked for', () => {
    assert.deepEqual(trigger(chatScene({ inFlight: 41, replicas: onTheirWay })), {
      why: 'scale up: 41 in flight > 40 at SLO on 4 replicas',
      measuredOnly: false,
    });
  });
});
