// Headroom for the bursts a model showed, and scale-down that matches it (docs/policy.md "Headroom for
// bursts"): observeLoad and burstHeadroom over named cases, decisions over named cases, then properties.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { ModelMemory, Snapshot } from '../../../src/domain/snapshot.ts';
import { DEFAULT_POLICY_SETTINGS } from '../../../src/domain/snapshot.ts';
import {
  burstHeadroom,
  headroomSentence,
  mayKeepAsSpare,
  mayPlaceSpare,
  observeLoad,
  risingBurst,
  waitingElsewhere,
} from '../../../src/policy/load-growth.ts';
import { decidePass } from '../../../src/policy/pass.ts';
import { buildView } from '../../../src/policy/view.ts';
import {
  apply,
  chatScene,
  gpus,
  h100,
  memory,
  NOW,
  quota,
  replicaOn,
  SECOND,
  settle,
  threeChatReplicas,
  windowOf,
} from './fixtures.ts';

const S = DEFAULT_POLICY_SETTINGS;
const MIN = 60 * SECOND;

/** A load in flight with none waiting, or [in flight, of which waiting, and since when they wait]. */
type Seen = number | [number, number] | [number, number, number];
const asSeen = (load: Seen) =>
  typeof load === 'number'
    ? { inFlight: load, waiting: 0 }
    : { inFlight: load[0], waiting: load[1], ...(load[2] !== undefined && { waitingSince: load[2] }) };

/** Memory after passes that saw these loads, one every `gapMs`, starting at NOW. */
function seen(loads: Seen[], gapMs = 10 * SECOND) {
  let growth: ModelMemory['growth'];
  for (const [i, load] of loads.entries()) growth = observeLoad(growth, NOW + i * gapMs, asSeen(load), [], S);
  return growth!;
}

describe('observeLoad: the rises a model showed within one start delay', () => {
  const cases: Record<string, { loads: Seen[]; gapMs?: number; growth: number[] }> = {
    'a steady load shows none': { loads: [20, 20, 20, 20], growth: [] },
    'a falling load shows none': { loads: [30, 20, 10, 0], growth: [] },
    'a rise within the start delay counts from the lowest load seen in it': {
      loads: [10, 4, 30, 44],
      growth: [40],
    },
    'a rise slower than the start delay counts only what it grew within one': {
      loads: [0, 10, 20, 30, 40, 50, 60, 70, 80],
      gapMs: 20 * SECOND,
      growth: [30],
    },
    'a rise that makes requests wait counts them: they arrived at once': {
      loads: [4, [44, 20]],
      growth: [40],
    },
    'a queue that goes on piling up behind starting replicas is not a rise': {
      loads: [4, [44, 20], [90, 66], [150, 126]],
      growth: [40],
    },
    'once the queue is served, what runs counts again, from the lowest load before the burst': {
      loads: [4, [44, 20], [90, 66], 30, 70],
      growth: [66],
    },
    'a queue seen again after a pass without one counts again': {
      loads: [4, [44, 20], 10, [80, 40]],
      growth: [76],
    },
    // Passes at NOW, +10 s, +20 s: the queue the third sees began at +15 s, after the second looked.
    'a queue that began after the last pass saw one counts again: that one emptied between the passes': {
      loads: [4, [44, 20, NOW + 5 * SECOND], [80, 40, NOW + 15 * SECOND]],
      growth: [76],
    },
    'a queue waiting since before the last pass saw it is the same one, piling up': {
      loads: [4, [44, 20, NOW + 5 * SECOND], [90, 66, NOW + 5 * SECOND]],
      growth: [40],
    },
  };
  for (const [name, { loads, gapMs, growth }] of Object.entries(cases)) {
    it(name, () => {
      const rises = seen(loads, gapMs).rises;
      assert.deepEqual(rises.length > 0 ? [Math.max(...rises.map((r) => r.growth))] : [], growth);
    });
  }

  it('learns the start delay from a replica seen starting, then ready', () => {
    const starting = { id: 'r9', state: 'starting' as const, created_at: NOW } as never;
    const before = observeLoad(undefined, NOW + SECOND, asSeen(0), [starting], S);
    const after = observeLoad(
      before,
      NOW + 45 * SECOND,
      asSeen(0),
      [{ ...(starting as object), state: 'ready' } as never],
      S,
    );
    assert.equal(after.readyMs, 45 * SECOND);
  });

  it('stays small whatever the load does', () => {
    const growth = seen(
      Array.from({ length: 500 }, (_, i) => i % 37),
      SECOND,
    );
    assert.ok(growth.lows.length <= 32 && growth.rises.length <= 16);
  });
});

describe('burstHeadroom: room kept beyond the load', () => {
  const growth = seen([4, 44]); // grew by 40 to 44
  it('is the rise, whole when just seen', () => {
    assert.equal(burstHeadroom(growth, NOW + 10 * SECOND, 0, S)?.spare, 40);
  });
  it('never above what the load reached then', () => {
    assert.equal(burstHeadroom(growth, NOW + 10 * SECOND, 30, S)?.spare, 14);
  });
  it('decays when bursts stop, and is gone after the memory span', () => {
    assert.equal(burstHeadroom(growth, NOW + 10 * SECOND + S.burstMemoryMs / 2, 0, S)?.spare, 20);
    assert.equal(burstHeadroom(growth, NOW + 10 * SECOND + S.burstMemoryMs, 0, S), null);
  });
  it('is said in one sentence', () => {
    const headroom = burstHeadroom(growth, NOW + 10 * SECOND, 0, S)!;
    assert.equal(
      headroomSentence('code', headroom, 3),
      'kept 3 spare: code grew by 40 in flight within 60 s 0 s ago',
    );
  });
});

describe('risingBurst: a spare replica while a burst outruns the ready replicas', () => {
  const rising = seen([4, 34]); // grew by 30 at the last pass, NOW + 10 s
  const at = NOW + 10 * SECOND;
  const cases: Record<string, { load: number; capacity: number; ready: number; want: number | null }> = {
    'room for the growth once more while the ready replicas fall short': {
      load: 34,
      capacity: 40,
      ready: 20,
      want: 30,
    },
    'none once pending and ready replicas hold L + growth': { load: 34, capacity: 64, ready: 20, want: null },
    'none while the ready replicas keep up (a steady model never buys spare room)': {
      load: 34,
      capacity: 40,
      ready: 40,
      want: null,
    },
  };
  for (const [name, c] of Object.entries(cases)) {
    it(name, () => {
      assert.equal(risingBurst(rising, at, c.load, c.capacity, c.ready)?.growth ?? null, c.want);
    });
  }
  it('none when the load did not rise at this pass', () => {
    assert.equal(risingBurst(rising, at + 10 * SECOND, 34, 40, 20), null);
  });
});

describe('spare room and other scopes', () => {
  // chat is guaranteed 8 GPUs (team:ml); code (team:web, none) borrows.
  const code = {
    ...chatScene().models[0],
    name: 'code',
    owner: 'team:web' as const,
    profiles: chatScene().models[0].profiles,
  };
  const codeReplica = (id: string) => ({ ...chatScene().replicas[0], id, model: 'code' });
  const scene = (chatLoad: number, chatReplicas: number) => {
    const s = chatScene({ models: [chatScene().models[0], code] });
    return {
      ...s,
      replicas: [...s.replicas.slice(0, chatReplicas), codeReplica('c1')],
      load: {
        chat: { in_flight: chatLoad, waiting: 0, reported_at: s.now },
        code: { in_flight: 0, waiting: 0, reported_at: s.now },
      },
    };
  };
  it('a borrowed spare is not kept while another scope holds less than its guarantee', () => {
    const view = buildView(scene(0, 1)); // chat holds 2 GPUs of its 8
    const c1 = view.replicasOfModel('code')[0];
    assert.equal(mayKeepAsSpare(view, 'team:web', c1), false);
    assert.equal(mayPlaceSpare(view, 'code', 'team:web', gpus(2)), false);
  });
  it('nor while another model waits for room', () => {
    const view = buildView(scene(99, 3));
    assert.equal(waitingElsewhere(view, 'code'), true);
    assert.equal(mayKeepAsSpare(view, 'team:web', view.replicasOfModel('code')[0]), false);
  });
  it('a protected replica is kept as spare while nobody waits', () => {
    const view = buildView(scene(0, 3));
    assert.equal(waitingElsewhere(view, 'code'), false);
    assert.equal(mayKeepAsSpare(view, 'team:ml', view.replicasOfModel('chat')[0]), true);
  });
});

/** chat (3 replicas of 10 at SLO) after passes at these loads, 10 s apart; the last pass's plan. */
function passes(loads: number[], parts: Partial<Snapshot> = {}, start: ModelMemory = memory()) {
  let mem = start;
  let s = chatScene(parts);
  const plans = [];
  for (const [i, load] of loads.entries()) {
    s = { ...s, now: NOW + i * 10 * SECOND };
    s = { ...s, load: { chat: { in_flight: load, waiting: 0, reported_at: s.now } } };
    const plan = decidePass(buildView(s), 'chat', mem, 30 * SECOND);
    plans.push(plan);
    mem = plan.memory;
    // Carried out as the activities do, and settled: what starts is ready, what drains has stopped.
    s = settle(apply(s, plan.decision));
    for (const next of plan.alsoPlace) s = settle(apply(s, next));
    const gone = new Set(plan.alsoRemove);
    s = { ...s, replicas: s.replicas.map((r) => (gone.has(r.id) ? { ...r, state: 'stopped' as const } : r)) };
  }
  return plans;
}

describe('decisions of a model that showed bursts', () => {
  it('keeps spare replicas after a burst, and says why', () => {
    // 2 -> 28 within a start delay, then back to 2 for 3 minutes: today's rule would shed 2 replicas.
    const plans = passes([2, 28, ...Array(20).fill(2)]);
    assert.ok(plans.every((p) => p.decision.action === 'none'));
    assert.match(plans.at(-1)!.decision.reason, /kept 2 spare: chat grew by 26 in flight within 60 s/);
    assert.deepEqual(plans.at(-1)!.decision.inputs.burst, {
      code: 'burst_headroom',
      spare: 24, // the rise of 26, 200 s old: weighed 1 - 200/3600

      growth: 26,
      within_ms: 60 * SECOND,
      ago_ms: 200 * SECOND,
    });
  });

  it('buys room for a burst that outruns its ready replicas: its growth once more, as spare', () => {
    // 4 -> 34 within a start delay on 3 ready replicas (30 at SLO): one replica for the load, then spare
    // ones toward 34 + 30, up to max_replicas 6.
    const [, burst] = passes([4, 34]);
    assert.equal(burst.decision.action, 'place');
    assert.match(burst.decision.reason, /^scale up: 34 in flight > 30 at SLO/);
    assert.deepEqual(
      burst.alsoPlace.map((d) => d.reason.split(';')[0]),
      Array(2).fill('scale up for a burst: 34 in flight > 30 ready at SLO, grew by 30 within 60 s'),
    );
    assert.deepEqual(burst.alsoPlace[0].inputs.burst, {
      code: 'rising_burst',
      growth: 30,
      within_ms: 60 * SECOND,
      ready: 30,
    });
  });

  it('sheds half of what could go in one pass once the load has clearly fallen', () => {
    // A small rise long ago leaves little room to keep; the load then falls to 1 for the window, on 5
    // replicas of which 4 could go (min_replicas 1): 2 go in one pass, then the next window decides.
    const old = seen([0, 3]);
    const aged = {
      ...memory(),
      growth: { ...old, rises: old.rises.map((r) => ({ ...r, at: r.at - S.burstMemoryMs + MIN })) },
    };
    const five = [...threeChatReplicas(), replicaOn('r4', h100, 'gpu-2'), replicaOn('r5', h100, 'gpu-3')];
    const plans = passes(Array(16).fill(1), { replicas: five }, aged);
    const removal = plans.find((p) => p.decision.action === 'remove')!;
    assert.deepEqual(removal.alsoRemove, ['r4']);
    assert.match(removal.decision.reason, /removing r5; and 1 more: r4$/);
  });

  it('a steady model sheds one replica a window, as before', () => {
    const plans = passes(Array(16).fill(1));
    const removal = plans.find((p) => p.decision.action === 'remove')!;
    assert.deepEqual(removal.alsoRemove, []);
  });

  it('keeps no spare room while a scope on its chain is over its limit', () => {
    const overLimit = { quotas: [quota('team:ml', gpus(2), gpus(4))] };
    const plans = passes([2, 28, ...Array(16).fill(2)], overLimit);
    assert.ok(plans.some((p) => p.decision.action === 'remove'));
  });

  it('does not flap: a pass after a removal on the same load neither adds nor removes', () => {
    const plans = passes([2, 28, ...Array(40).fill(2)]);
    const actions = plans.map((p) => p.decision.action);
    const removed = actions.indexOf('remove');
    if (removed >= 0) assert.ok(!actions.slice(removed).includes('place'));
  });
});

const NUM_RUNS = Number(process.env.POLICY_RUNS ?? 200);

describe('properties of headroom and scale-down', () => {
  const loads = fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 2, maxLength: 30 });

  it('a steady model (its load never rises) decides exactly as without any memory of growth', () => {
    fc.assert(
      fc.property(loads, (raw) => {
        const falling = [...raw].sort((a, b) => b - a);
        let mem = memory();
        let bare = memory();
        for (const [i, load] of falling.entries()) {
          const s = { ...chatScene({ inFlight: load }), now: NOW + i * 10 * SECOND };
          const view = buildView({
            ...s,
            load: { chat: { in_flight: load, waiting: 0, reported_at: s.now } },
          });
          const plan = decidePass(view, 'chat', mem, 30 * SECOND);
          const plain = decidePass(view, 'chat', { ...bare, growth: undefined }, 30 * SECOND);
          assert.deepEqual(plan.decision.reason, plain.decision.reason);
          assert.deepEqual(plan.decision.action, plain.decision.action);
          assert.deepEqual(plan.alsoRemove, plain.alsoRemove);
          mem = plan.memory;
          bare = { ...plain.memory, growth: undefined };
          assert.deepEqual(windowOf(mem), windowOf(bare));
        }
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('a queue piling up adds no rise: the memory keeps what it learned when the requests began to wait', () => {
    const queue = fc.array(
      fc
        .tuple(fc.integer({ min: 1, max: 400 }), fc.integer({ min: 0, max: 200 }))
        .map(([waiting, running]) => [running + waiting, waiting]),
      { minLength: 1, maxLength: 12 },
    );
    fc.assert(
      fc.property(loads, queue, (before, waits) => {
        const onset = seen([...before, waits[0] as [number, number]]);
        const piled = seen([...before, ...(waits as [number, number][])]);
        assert.deepEqual(piled.rises, onset.rises);
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('no flapping: with the load held, once a replica goes none is placed again', () => {
    // A burst may buy spare room that the held load then sheds once (the burst did not go on); what is
    // shed is never bought back while the load holds.
    fc.assert(
      fc.property(loads, fc.integer({ min: 0, max: 60 }), (before, held) => {
        const plans = passes([...before, ...Array(30).fill(held)]);
        const settled = plans.slice(before.length).map((p) => p.decision.action);
        const removed = settled.indexOf('remove');
        assert.ok(removed < 0 || !settled.slice(removed).includes('place'), settled.join(','));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('spare room never passes a limit nor takes room held by others: only places, within the limit, no victims', () => {
    // team:ml guaranteed 4 GPUs, limited to 8 (4 GPU replicas; CPU ones are not limited), whatever the bursts.
    const limited = { quotas: [quota('team:ml', gpus(4), gpus(8))] };
    fc.assert(
      fc.property(loads, (raw) => {
        const plans = passes(
          raw.map((l) => l * 2),
          limited,
        );
        for (const plan of plans) {
          for (const d of [plan.decision, ...plan.alsoPlace]) {
            if (!d.reason.includes('for a burst')) continue;
            assert.equal(d.action, 'place', d.reason);
            assert.equal(d.victims, undefined, d.reason);
          }
        }
        const held = plans.map((p) => p.decision.inputs.quotas.find((q) => q.scope === 'team:ml')!.holds);
        assert.ok(Math.max(...held.map((h) => h.gpus ?? 0)) <= 8, 'within the limit of 8 GPUs');
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
