// Which replica scale-down takes back, when it may, and that it waits a full window each time (POLICY.md
// "Scaling a model"): removalOrder and removable over named cases, then passes over time.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Replica } from '../../../src/domain/cluster.ts';
import type { Model } from '../../../src/domain/model.ts';
import type { ModelMemory, Snapshot } from '../../../src/domain/snapshot.ts';
import { decideModel } from '../../../src/policy/decide.ts';
import { loadOf } from '../../../src/policy/load.ts';
import { modelFigures } from '../../../src/policy/model-figures.ts';
import { removable, removalOrder, underSeventyPercent } from '../../../src/policy/scale-down.ts';
import { buildView } from '../../../src/policy/view.ts';
import {
  apply,
  chat,
  chatScene,
  cpuLlama,
  gpus,
  h100,
  memory,
  profile,
  quota,
  replica,
  replicaOn,
  loadOf as reportLoad,
  SECOND,
  settle,
  windowOf,
} from './fixtures.ts';

const withChat = (spec: Partial<Model>) => ({ models: [{ ...chat, ...spec }] });
/** Two vllm-h100 then two cpu-llama replicas, oldest first. */
const mixed = () => [
  replicaOn('g1', h100, 'gpu-1'),
  replicaOn('g2', h100, 'gpu-1'),
  replicaOn('c1', cpuLlama, 'cpu-1'),
  replicaOn('c2', cpuLlama, 'cpu-1'),
];

function scaleDownInputs(s: Snapshot) {
  const view = buildView(s);
  const model = view.models.get('chat')!;
  const figures = modelFigures(view, model);
  return { model, figures, order: removalOrder(view, model, figures), load: loadOf(view, 'chat') };
}

describe('removalOrder: the replica taken back first', () => {
  const big = profile('big', gpus(4), { priority: 20 });
  const cases: Record<string, { s: Snapshot; want: string[] }> = {
    'newest first': { s: chatScene(), want: ['r3', 'r2', 'r1'] },
    'the least preferred profile first, then the newest': {
      s: chatScene({ replicas: mixed() }),
      want: ['c2', 'c1', 'g2', 'g1'],
    },
    'a profile gone from the spec counts as least preferred': {
      s: chatScene({
        quotas: [],
        replicas: [replicaOn('x', profile('retired', gpus(1)), 'gpu-3'), ...mixed()],
      }),
      want: ['x', 'c2', 'c1', 'g2', 'g1'],
    },
    'a borrowed replica before a protected one, even when it is older and of the preferred profile': {
      // G = 2 GPUs: old-big (4) does not fit and is borrowed; new-small fits and is protected.
      s: chatScene({
        ...withChat({ profiles: [h100, big] }),
        quotas: [quota('team:ml', gpus(2))],
        replicas: [replicaOn('old-big', big, 'gpu-2'), replicaOn('new-small', h100, 'gpu-1')],
      }),
      want: ['old-big', 'new-small'],
    },
    'a scope over its limit: the replicas using the dimension it passes first, newest first': {
      s: chatScene({ replicas: mixed(), quotas: [quota('org:acme', undefined, gpus(2))] }),
      want: ['g2', 'g1', 'c2', 'c1'],
    },
    'a limit that is not passed changes nothing': {
      s: chatScene({ replicas: mixed(), quotas: [quota('org:acme', undefined, gpus(4))] }),
      want: ['c2', 'c1', 'g2', 'g1'],
    },
    'replicas as old as each other go by replica ID, the greater first': {
      s: chatScene({
        replicas: ['a', 'c', 'b'].map((id) =>
          replica(id, { model: 'chat', profile: h100, node: 'gpu-1' }, { created_at: 1 }),
        ),
      }),
      want: ['c', 'b', 'a'],
    },
  };
  for (const [name, c] of Object.entries(cases)) {
    it(name, () => {
      const { figures, order } = scaleDownInputs(c.s);
      assert.deepEqual(
        [...figures.serving].sort(order).map((r) => r.id),
        c.want,
      );
    });
  }
});

describe('removable: the scale-down condition, L <= 0.7 (C - c(r))', () => {
  const small = profile('small', gpus(1));
  const wide = profile('wide', gpus(4), { default_concurrency: 20 });
  /** Seven vllm-h100 replicas, 10 at SLO each. */
  const seven = Array.from({ length: 7 }, (_, i) => replicaOn(`s${i}`, h100, `gpu-${(i % 3) + 1}`));
  const cases: Record<string, { s: Snapshot; want: { replica: string; rest: number } | null }> = {
    'load at exactly 70% of the rest: the newest may go': {
      s: chatScene({ inFlight: 14 }),
      want: { replica: 'r3', rest: 20 },
    },
    'one above 70% of the rest: none may go': { s: chatScene({ inFlight: 15 }), want: null },
    'exact where floats are not: 0.7 x 60 is 41.999... in floats, and 42 <= 0.7 x 60': {
      s: chatScene({ inFlight: 42, replicas: seven, ...withChat({ max_replicas: 8 }) }),
      want: { replica: 's6', rest: 60 },
    },
    'idle, min_replicas 0: the last one may go': {
      s: chatScene({ inFlight: 0, replicas: [replicaOn('only', h100, 'gpu-1')] }),
      want: { replica: 'only', rest: 0 },
    },
    'min_replicas would break without it: none': {
      s: chatScene({ inFlight: 0, ...withChat({ min_replicas: 3 }) }),
      want: null,
    },
    'the target throughput would break without it: none': {
      s: chatScene({ inFlight: 0, ...withChat({ target_tokens_per_sec: 2500 }) }),
      want: null,
    },
    'the target throughput holds without it: the newest may go': {
      s: chatScene({ inFlight: 0, ...withChat({ target_tokens_per_sec: 2000 }) }),
      want: { replica: 'r3', rest: 20 },
    },
    'the first in removal order would break it: a later one goes': {
      // C = 20 + 8 + 8: without wide (least preferred) 16 would stay, 15 > 11.2; without small-2, 28.
      s: chatScene({
        inFlight: 15,
        ...withChat({ profiles: [small, wide] }),
        replicas: [
          replicaOn('wide', wide, 'gpu-3'),
          replicaOn('small-1', small, 'gpu-1'),
          replicaOn('small-2', small, 'gpu-1'),
        ],
      }),
      want: { replica: 'small-2', rest: 28 },
    },
  };
  for (const [name, c] of Object.entries(cases)) {
    it(name, () => {
      const { model, figures, order, load } = scaleDownInputs(c.s);
      const found = removable(model, figures, load.inFlight!, order);
      assert.deepEqual(found && { replica: found.replica.id, rest: found.rest }, c.want);
    });
  }

  it('compares in whole tenths: exact on the boundary, false just past it', () => {
    assert.equal(underSeventyPercent(42, 60), true);
    assert.equal(underSeventyPercent(2.1, 3), true);
    assert.equal(underSeventyPercent(2.2, 3), false);
  });
});

const startPending = (r: Replica): Replica => (r.state === 'pending' ? { ...r, state: 'starting' } : r);

/**
 * A pass `at` seconds after the start with `inFlight` in flight, and what it does: its action, or the
 * replica it removes. Before it, `starting` starts the pending replicas, `settled` makes every replica
 * ready or stopped.
 */
type Step = { at: number; inFlight: number; replicas?: 'starting' | 'settled'; want: string };

/**
 * Runs chat's passes in order from `start`, carrying each decision's memory into the next and applying
 * what it does (a placed replica is pending). Says what each did, at its time.
 */
function passes(start: Snapshot, steps: Step[], since: number | null = null) {
  let s = start;
  let mem: ModelMemory = memory(since);
  const seen: string[] = [];
  for (const step of steps) {
    s = { ...s, now: start.now + step.at * SECOND };
    if (step.replicas === 'settled') s = settle(s);
    if (step.replicas === 'starting') s = { ...s, replicas: s.replicas.map(startPending) };
    s = reportLoad(s, 'chat', step.inFlight);
    const d = decideModel(s, 'chat', mem);
    const what = d.action === 'remove' ? d.replica!.replace(/^chat-new-.*/, 'the new replica') : d.action;
    seen.push(`${what} at ${step.at} s`);
    mem = { ...mem, ...d.memory };
    s = apply(s, d);
  }
  return seen;
}

describe('scale-down over time: one replica per full window, and no flapping', () => {
  const cases: Record<string, { steps: Step[]; since?: number }> = {
    'held for the whole window: the newest goes, and the next waits a new window': {
      steps: [
        { at: 0, inFlight: 3, want: 'none' },
        { at: 119, inFlight: 3, want: 'none' },
        { at: 120, inFlight: 3, want: 'r3' },
        { at: 121, inFlight: 3, replicas: 'settled', want: 'none' },
        { at: 240, inFlight: 3, want: 'none' },
        { at: 241, inFlight: 3, want: 'r2' },
      ],
    },
    'load hovering at the 70% boundary: the window starts again each time it breaks, nothing goes': {
      steps: [
        { at: 0, inFlight: 14, want: 'none' },
        { at: 100, inFlight: 15, want: 'none' },
        { at: 110, inFlight: 14, want: 'none' },
        { at: 200, inFlight: 15, want: 'none' },
        { at: 220, inFlight: 14, want: 'none' },
        { at: 330, inFlight: 15, want: 'none' },
        { at: 340, inFlight: 14, want: 'none' },
      ],
    },
    'a replica just placed is not removed in the same window': {
      // The window ran for 100 s; a burst places r4; the load falls back at once.
      since: -100,
      steps: [
        { at: 0, inFlight: 31, want: 'place' },
        { at: 10, inFlight: 3, replicas: 'starting', want: 'none' },
        { at: 30, inFlight: 3, replicas: 'settled', want: 'none' },
        { at: 149, inFlight: 3, want: 'none' },
        { at: 150, inFlight: 3, want: 'the new replica' },
      ],
    },
  };
  for (const [name, c] of Object.entries(cases)) {
    it(name, () => {
      const seen = passes(
        chatScene(),
        c.steps,
        c.since === undefined ? null : chatScene().now + c.since * SECOND,
      );
      assert.deepEqual(
        seen,
        c.steps.map((step) => `${step.want} at ${step.at} s`),
      );
    });
  }

  it('unknown load clears the window: after a gap in reports, a full window again', () => {
    const s = chatScene();
    const first = decideModel(reportLoad(s, 'chat', 3), 'chat', memory());
    assert.deepEqual(windowOf(first.memory), { scaleDownSince: s.now });
    const stale = decideModel(
      reportLoad({ ...s, now: s.now + 119 * SECOND }, 'chat', 3, 61 * SECOND),
      'chat',
      {
        ...memory(),
        ...first.memory,
      },
    );
    assert.equal(stale.action, 'none');
    assert.deepEqual(windowOf(stale.memory), { scaleDownSince: null });
  });
});
