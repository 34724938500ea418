import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Decision } from '../../../src/domain/decision.ts';
import type { Measurement, Profile } from '../../../src/domain/model.ts';
import type { ModelMemory, Snapshot } from '../../../src/domain/snapshot.ts';
import { decideModel, refusedDecision } from '../../../src/policy/decide.ts';
import {
  apply,
  chat,
  chatNodes,
  chatScene,
  cores,
  cpuLlama,
  gpus,
  h100,
  loadOf,
  measured,
  memory,
  model,
  NOW,
  node,
  profile,
  quota,
  replica,
  replicaOn,
  SCOPES,
  SECOND,
  settle,
  threeChatReplicas,
  windowOf,
  withOwner,
  world,
} from './fixtures.ts';

const decide = (s: Snapshot, mem: ModelMemory = memory(), name = 'chat') => decideModel(s, name, mem);
const pick = (d: Decision) => ({
  action: d.action,
  profile: d.profile,
  node: d.node,
  replica: d.replica,
  pending: d.pending,
});
/** What the decision's sentence says the model waits for. */
const pendingPart = (d: Decision) => d.reason.split('; pending: ')[1];

describe('scaling up', () => {
  it('adds a replica when load passes capacity, placed best fit, with one sentence why', () => {
    const d = decide(chatScene({ inFlight: 34 }));
    assert.deepEqual(pick(d), {
      action: 'place',
      profile: 'vllm-h100',
      node: 'gpu-1',
      replica: undefined,
      pending: undefined,
    });
    assert.equal(
      d.reason,
      'scale up: 34 in flight > 30 at SLO on 3 replicas; placed vllm-h100 on gpu-1 (team Acme / ml within guarantee 8 GPUs, holds 6 GPUs)',
    );
    assert.deepEqual(d.resources, h100.resources);
    assert.deepEqual(windowOf(d.memory), { scaleDownSince: null });
  });

  it('carries the inputs that mattered', () => {
    const d = decide(chatScene({ inFlight: 34 }));
    assert.deepEqual(d.inputs, {
      in_flight: 34,
      capacity_at_slo: 30,
      replicas: 3,
      min_replicas: 0,
      max_replicas: 6,
      target_tokens_per_sec: undefined,
      tokens_per_sec: 3000,
      quotas: [
        {
          scope: 'team:ml',
          name: 'Acme / ml',
          guarantee: gpus(8),
          limit: gpus(16),
          holds: gpus(6, { cores: 48, memory_gib: 0 }),
        },
      ],
    });
  });

  it('counts running and waiting requests', () => {
    const s = chatScene();
    const d = decide({ ...s, load: { chat: { in_flight: 28, waiting: 3, reported_at: NOW } } });
    assert.equal(d.action, 'place');
    assert.match(d.reason, /^scale up: 31 in flight > 30/);
  });

  it('from zero replicas any load adds one', () => {
    const d = decide(chatScene({ replicas: [], inFlight: 1 }));
    assert.equal(d.action, 'place');
    assert.match(d.reason, /^scale up: 1 in flight and no replica; placed vllm-h100 on gpu-1/);
  });

  it('no load and no replica: nothing', () => {
    assert.equal(decide(chatScene({ replicas: [], inFlight: 0 })).action, 'none');
  });

  it('up to min_replicas whatever the load', () => {
    const s = chatScene({ replicas: [], models: [{ ...chat, min_replicas: 2 }] });
    const d = decide(s);
    assert.equal(d.action, 'place');
    assert.match(d.reason, /^scale up: 0 replicas < min_replicas 2/);
  });

  it('stale load: no scaling on it', () => {
    const d = decide(chatScene({ inFlight: 100, loadAge: 61 * SECOND }));
    assert.equal(d.action, 'none');
    assert.equal(d.inputs.in_flight, null);
    assert.match(d.reason, /load unknown \(last report 61 s ago\)/);
  });

  it('stale load: min_replicas still holds', () => {
    const s = chatScene({
      inFlight: 0,
      loadAge: 61 * SECOND,
      replicas: [replicaOn('r1', h100, 'gpu-1')],
      models: [{ ...chat, min_replicas: 2 }],
    });
    assert.equal(decide(s).action, 'place');
  });

  it('load exactly at the staleness bound still counts', () => {
    assert.equal(decide(chatScene({ inFlight: 34, loadAge: 60 * SECOND })).action, 'place');
  });

  it('max_replicas reached: pending says so', () => {
    const d = decide(chatScene({ inFlight: 34, models: [{ ...chat, max_replicas: 3 }] }));
    assert.equal(d.action, 'none');
    assert.deepEqual(d.pending, [{ code: 'max_replicas', max_replicas: 3 }]);
    assert.equal(
      d.reason,
      'scale up: 34 in flight > 30 at SLO on 3 replicas; pending: max_replicas 3 reached',
    );
  });

  it('target throughput: up while the measured throughput is below it, at low load', () => {
    const d = decide(chatScene({ inFlight: 1, models: [{ ...chat, target_tokens_per_sec: 3500 }] }));
    assert.equal(d.action, 'place');
    assert.match(d.reason, /^scale up: 3000 tokens\/s < target 3500 tokens\/s on 3 replicas/);
  });

  it('target throughput: an unmeasured profile adds no known throughput, so it is not added for it', () => {
    const only = model('solo', [cpuLlama], { target_tokens_per_sec: 100 });
    const d = decide(chatScene({ models: [only], replicas: [] }), memory(), 'solo');
    assert.equal(d.action, 'none');
    assert.deepEqual(d.pending, [{ code: 'unmeasured', profile: 'cpu-llama' }]);
    assert.equal(pendingPart(d), 'cpu-llama is not measured');
  });

  it('a backed-off profile falls back to the next', () => {
    const d = decide(chatScene({ inFlight: 34 }), memory(null, { 'vllm-h100': NOW + 30 * SECOND }));
    assert.deepEqual(pick(d), {
      action: 'place',
      profile: 'cpu-llama',
      node: 'cpu-1',
      replica: undefined,
      pending: undefined,
    });
    assert.deepEqual(d.rejected, [
      { profile: 'vllm-h100', why: 'backed off for 30 s more after failed starts or crashes' },
    ]);
  });

  it('a backoff that has run out is tried again', () => {
    assert.equal(
      decide(chatScene({ inFlight: 34 }), memory(null, { 'vllm-h100': NOW })).profile,
      'vllm-h100',
    );
  });

  it('a limit on the chain sends on to the next profile, and says which', () => {
    const d = decide(chatScene({ inFlight: 34, quotas: [quota('team:ml', undefined, gpus(6))] }));
    assert.deepEqual(pick(d), {
      action: 'place',
      profile: 'cpu-llama',
      node: 'cpu-1',
      replica: undefined,
      pending: undefined,
    });
    assert.deepEqual(d.rejected, [
      { profile: 'vllm-h100', why: 'limit of team Acme / ml: holds 6 GPUs + 2 > 6' },
    ]);
    assert.match(d.reason, /placed cpu-llama on cpu-1 \(team Acme \/ ml under limit 6 GPUs, holds 6 GPUs\)$/);
  });

  it('nothing fits: pending names every reason', () => {
    const other = model('other', [cpuLlama]);
    const cpuFull = [1, 2, 3, 4].map((i) => replicaOn(`c${i}`, cpuLlama, 'cpu-1', 'ready', other));
    const d = decide(
      chatScene({
        inFlight: 34,
        quotas: [quota('org:acme', undefined, gpus(6))],
        models: [chat, other],
        nodes: chatNodes.map((n) => (n.gpu_model ? { ...n, state: 'cordoned' as const } : n)),
        replicas: [...threeChatReplicas(), ...cpuFull],
      }),
    );
    assert.equal(d.action, 'none');
    assert.deepEqual(d.pending, [
      { code: 'limit', profile: 'vllm-h100', scope: 'org:acme', scope_label: 'org Acme', resource: 'gpus' },
      { code: 'no_room', profile: 'cpu-llama', needs: cores(16) },
    ]);
    assert.equal(
      d.reason,
      'scale up: 34 in flight > 30 at SLO on 3 replicas; pending: a limit of org Acme stops vllm-h100 and no room for cpu-llama (needs 16 cores)',
    );
    assert.equal(d.rejected.length, 2);
  });

  it('a limit lowered below what is held: nothing stops, no new replica', () => {
    const gpuOnly = { ...chat, profiles: [h100] };
    const d = decide(
      chatScene({ inFlight: 34, models: [gpuOnly], quotas: [quota('team:ml', undefined, gpus(4))] }),
    );
    assert.equal(d.action, 'none');
    assert.deepEqual(d.pending, [
      {
        code: 'limit',
        profile: 'vllm-h100',
        scope: 'team:ml',
        scope_label: 'team Acme / ml',
        resource: 'gpus',
      },
    ]);
    assert.equal(pendingPart(d), 'a limit of team Acme / ml stops vllm-h100');
  });
});

describe('reclaim', () => {
  const web = model(
    'web',
    [
      profile('w8', gpus(8, { cores: 8 }), { gpu_model: 'H100' }),
      profile('w2', gpus(2), { gpu_model: 'H100' }),
    ],
    {
      owner: 'team:web',
      max_replicas: 10,
    },
  );
  const [w8, w2] = web.profiles;
  const gpuOnly = { ...chat, profiles: [h100] };
  /** The H100 nodes are full of web's borrowed replicas; chat runs nothing. */
  const full = (extra: Partial<Snapshot> = {}) =>
    chatScene({
      inFlight: 5,
      models: [gpuOnly, web],
      replicas: [
        replicaOn('w-1', w8, 'gpu-1', 'ready', web),
        replicaOn('w-2', w8, 'gpu-2', 'ready', web),
        ...[1, 2, 3, 4].map((i) => replicaOn(`w-3-${i}`, w2, 'gpu-3', 'ready', web)),
      ],
      ...extra,
    });

  it('reclaims for an owner within its guarantee when no node has room', () => {
    const d = decide(full());
    assert.equal(d.action, 'reclaim');
    assert.equal(d.node, 'gpu-3');
    assert.equal(d.reclaim_for, 'team:ml');
    assert.deepEqual(
      d.victims?.map((v) => v.replica),
      ['w-3-4'],
    );
    assert.equal(
      d.reason,
      'scale up: 5 in flight and no replica; reclaimed 1 borrowed replica on gpu-3 for team Acme / ml (within guarantee 8 GPUs, holds nothing) to place vllm-h100',
    );
  });

  it('where draining replicas free enough, reserves their room and takes no victim', () => {
    const replicas = full().replicas.map((r) =>
      r.id === 'w-3-4' ? { ...r, state: 'draining' as const } : r,
    );
    const d = decide(full({ replicas }));
    assert.equal(d.action, 'reclaim');
    assert.deepEqual(d.victims, []);
    assert.equal(
      d.reason,
      'scale up: 5 in flight and no replica; reserved the room draining replicas free on gpu-3 for team Acme / ml (within guarantee 8 GPUs, holds nothing) to place vllm-h100',
    );
  });

  it('reclaims for the preferred profile before trying the next one', () => {
    const d = decide(full({ models: [chat, web] }));
    assert.equal(d.action, 'reclaim');
    assert.equal(d.profile, 'vllm-h100');
  });

  it('no victim possible when only protected replicas stand in the way: pending', () => {
    const d = decide(
      full({ quotas: [quota('team:ml', gpus(8)), quota('org:beta', gpus(24, { cores: 16 }))] }),
    );
    assert.equal(d.action, 'none');
    assert.deepEqual(d.pending, [{ code: 'no_room', profile: 'vllm-h100', needs: h100.resources }]);
    assert.equal(pendingPart(d), 'no room for vllm-h100 (needs 2 GPUs, 16 cores)');
    assert.deepEqual(d.rejected, [
      {
        profile: 'vllm-h100',
        why: 'no room for vllm-h100 (needs 2 GPUs, 16 cores) and nothing borrowed to reclaim for team Acme / ml',
      },
    ]);
  });

  it('an owner beyond its guarantee waits for headroom', () => {
    const d = decide(full({ quotas: [quota('team:ml', gpus(1))] }));
    assert.equal(d.action, 'none');
    assert.deepEqual(d.pending, [{ code: 'no_room', profile: 'vllm-h100', needs: h100.resources }]);
    assert.equal(pendingPart(d), 'no room for vllm-h100 (needs 2 GPUs, 16 cores)');
  });

  it('an owner change is replayed: under its new owner’s guarantee it reclaims', () => {
    const s = full({ models: [{ ...gpuOnly, owner: 'org:beta' }, web] });
    assert.equal(decide(s).action, 'none');
    assert.equal(decide(withOwner(s, 'chat', 'project:training')).action, 'reclaim');
  });

  it('a model without owner never reclaims', () => {
    const d = decide(full({ models: [{ ...gpuOnly, owner: null }, web] }));
    assert.equal(d.action, 'none');
  });
});

describe('scaling down', () => {
  const idle = (since: number | null, parts: Parameters<typeof chatScene>[0] = {}) =>
    decide(chatScene({ inFlight: 3, ...parts }), memory(since));

  it('starts the window when the condition starts to hold', () => {
    const d = idle(null);
    assert.equal(d.action, 'none');
    assert.deepEqual(windowOf(d.memory), { scaleDownSince: NOW });
    assert.equal(
      d.reason,
      'steady: 3 in flight <= 70% of 20 at SLO without replica r3 for 0 s of the 120 s window',
    );
  });

  it('held 119 s: nothing yet, the window is kept', () => {
    const d = idle(NOW - 119 * SECOND);
    assert.equal(d.action, 'none');
    assert.deepEqual(windowOf(d.memory), { scaleDownSince: NOW - 119 * SECOND });
  });

  it('held 120 s: removes the newest, and the next removal waits a new window', () => {
    const d = idle(NOW - 120 * SECOND);
    assert.equal(d.action, 'remove');
    assert.equal(d.replica, 'r3');
    assert.equal(
      d.reason,
      'scale down: 3 in flight <= 70% of 20 at SLO without replica r3 for 120 s; removing r3',
    );
    assert.deepEqual(windowOf(d.memory), { scaleDownSince: null });
  });

  it('the window breaks when the condition does', () => {
    const d = idle(NOW - 119 * SECOND, { inFlight: 15 });
    assert.equal(d.action, 'none');
    assert.deepEqual(windowOf(d.memory), { scaleDownSince: null });
  });

  it('no scale-down while a replica is starting', () => {
    const d = idle(NOW - 600 * SECOND, {
      replicas: [...threeChatReplicas(), replicaOn('r4', h100, 'gpu-3', 'starting')],
    });
    assert.equal(d.action, 'none');
    assert.deepEqual(windowOf(d.memory), { scaleDownSince: null });
    assert.match(d.reason, /no scale-down while 1 replica pending or starting$/);
  });

  it('no scale-down on unknown load', () => {
    assert.equal(idle(NOW - 600 * SECOND, { inFlight: 0, loadAge: 90 * SECOND }).action, 'none');
  });

  it('min_replicas still holds after a removal', () => {
    assert.equal(idle(NOW - 600 * SECOND, { models: [{ ...chat, min_replicas: 3 }] }).action, 'none');
  });

  it('the target throughput still holds after a removal', () => {
    assert.equal(
      idle(NOW - 600 * SECOND, { models: [{ ...chat, target_tokens_per_sec: 2500 }] }).action,
      'none',
    );
    assert.equal(
      idle(NOW - 600 * SECOND, { models: [{ ...chat, target_tokens_per_sec: 2000 }] }).action,
      'remove',
    );
  });

  it('down to zero when idle and min_replicas is 0', () => {
    const d = idle(NOW - 120 * SECOND, { inFlight: 0, replicas: [replicaOn('r1', h100, 'gpu-1')] });
    assert.equal(d.action, 'remove');
    assert.match(d.reason, /^scale down: 0 in flight <= 70% of 0 at SLO without replica r1/);
  });

  it('replicas beyond max_replicas are removed at once, newest first', () => {
    const d = decide(chatScene({ inFlight: 100, models: [{ ...chat, max_replicas: 2 }] }));
    assert.equal(d.action, 'remove');
    assert.equal(d.replica, 'r3');
    assert.equal(d.reason, 'scale down: 3 replicas > max_replicas 2; removing r3');
  });

  // Which replica goes is removalOrder's rule (scale-down.test.ts); here, that the pass follows it.
  it('the replica removed is the first in removal order: the least preferred profile, then the newest', () => {
    const replicas = [
      replicaOn('g1', h100, 'gpu-1'),
      replicaOn('g2', h100, 'gpu-1'),
      replicaOn('c1', cpuLlama, 'cpu-1'),
      replicaOn('c2', cpuLlama, 'cpu-1'),
    ];
    assert.equal(idle(NOW - 120 * SECOND, { inFlight: 0, replicas }).replica, 'c2');
  });
});

describe('does not flap', () => {
  it('after a scale-up, the next pass at the same load does nothing', () => {
    let s = chatScene({ inFlight: 34 });
    s = apply(s, decide(s));
    const next = decide(s);
    assert.equal(next.action, 'none');
    assert.match(next.reason, /no scale-down while 1 replica pending or starting/);
    const settled = decide(settle(s));
    assert.equal(settled.action, 'none');
    assert.equal(settled.reason, 'steady: 34 in flight <= 40 at SLO on 4 replicas');
  });

  it('after a reclaim, the victim’s model does not reclaim back', () => {
    const web = model('web', [profile('w4', gpus(4), { gpu_model: 'H100' })], {
      owner: 'team:web',
      max_replicas: 10,
    });
    const w4 = web.profiles[0];
    let s = chatScene({
      models: [{ ...chat, profiles: [h100] }, web],
      quotas: [quota('team:ml', gpus(8)), quota('team:web', gpus(8))],
      replicas: ['gpu-1', 'gpu-1', 'gpu-2', 'gpu-2', 'gpu-3', 'gpu-3'].map((n, i) =>
        replicaOn(`w${i}`, w4, n, 'ready', web),
      ),
    });
    s = loadOf(loadOf(s, 'chat', 5), 'web', 1000);
    const d = decide(s);
    assert.equal(d.action, 'reclaim');
    s = apply(s, d);
    for (const state of [s, settle(s)]) {
      const back = decide(state, memory(), 'web');
      assert.notEqual(back.action, 'reclaim');
      assert.equal(back.action, 'none');
    }
  });

  it('sibling projects under a team that alone has a guarantee never take from each other', () => {
    const a = model('a', [profile('pa', gpus(2))], { owner: 'project:training', max_replicas: 8 });
    const b = model('b', [profile('pb', gpus(2))], { owner: 'project:serving', max_replicas: 8 });
    const guest = model('guest', [profile('g', gpus(2))], { owner: 'org:beta', max_replicas: 8 });
    let s = world({
      scopes: SCOPES,
      quotas: [quota('team:ml', gpus(8))],
      models: [a, b, guest],
      nodes: [node('n1', gpus(8)), node('n2', gpus(8))],
      replicas: Array.from({ length: 8 }, (_, i) =>
        replicaOn(`g${i}`, guest.profiles[0], i < 4 ? 'n1' : 'n2', 'ready', guest),
      ),
    });
    for (const name of ['a', 'b', 'guest']) s = loadOf(s, name, 1000);
    const reclaimed: string[] = [];
    for (let round = 0; round < 12; round++) {
      for (const name of ['a', 'b', 'guest']) {
        const d = decide(s, memory(), name);
        for (const v of d.victims ?? []) {
          assert.equal(v.model, 'guest', `${name} reclaimed ${v.replica} of ${v.model}`);
          reclaimed.push(v.replica);
        }
        s = settle(apply(s, d));
      }
    }
    // The team got its 8 guaranteed GPUs back from the guest (4 reclaims), then everybody waits.
    assert.equal(reclaimed.length, 4);
    assert.equal(new Set(reclaimed).size, 4);
    for (const name of ['a', 'b', 'guest']) assert.equal(decide(s, memory(), name).action, 'none');
  });
});

it('a model that is not there gets a decision that says so', () => {
  const d = decide(chatScene(), memory(), 'nope');
  assert.equal(d.action, 'none');
  assert.equal(d.reason, 'there is no model "nope"');
});

it('a refused reservation is recorded as nothing done, the refusal said, the rest kept', () => {
  const planned = decide(chatScene({ inFlight: 34 }));
  const why = 'no room left on gpu-1 for vllm-h100';
  assert.deepEqual(refusedDecision(planned, why), {
    ...planned,
    action: 'none',
    reason: `${planned.reason}; not done: ${why}, planning again`,
  });
  assert.equal(planned.action, 'place', 'the planned decision is left as it was');
});

// A profile measured as unable to meet its SLO (max_concurrency_at_slo 0, stored before the API refused
// it) adds no capacity: were it tried, any load would scale it to max_replicas. It is skipped, and said so.
describe('a profile measured as unable to meet its SLO', () => {
  const fast = profile('fast', gpus(1));
  const slow = profile('slow', gpus(1));
  const preferred = profile('preferred', gpus(1), { priority: 10 });
  const WHY =
    'not servable: measured as unable to meet its SLO at any concurrency (max_concurrency_at_slo 0); bench it again to use it';

  function unservable(profiles: Profile[], measurements: Measurement[], parts: Partial<Snapshot> = {}) {
    const nodes = [node('gpu-1', gpus(8))];
    return world({ models: [model('m', profiles, { max_replicas: 4 })], measurements, nodes, ...parts });
  }

  const cases: {
    name: string;
    profiles: Profile[];
    measurements: Measurement[];
    placed: string | null;
    rejected: string[];
    pending?: string;
  }[] = [
    {
      name: 'at equal priority it goes after an unmeasured profile, which is placed instead',
      profiles: [fast, slow],
      measurements: [measured('m', 'slow', 0, 0)],
      placed: 'fast',
      rejected: [],
    },
    {
      name: 'a higher priority does not bring it first',
      profiles: [preferred, fast],
      measurements: [measured('m', 'preferred', 0, 0), measured('m', 'fast', 8, 100)],
      placed: 'fast',
      rejected: [],
    },
    {
      name: 'alone, the model waits and the decision says why',
      profiles: [slow],
      measurements: [measured('m', 'slow', 0, 0)],
      placed: null,
      rejected: ['slow'],
      pending: 'slow cannot meet its SLO',
    },
    {
      name: 'a measurement above 0 is servable as before',
      profiles: [slow, fast],
      measurements: [measured('m', 'slow', 1, 10)],
      placed: 'slow',
      rejected: [],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const s = loadOf(unservable(c.profiles, c.measurements), 'm', 5);
      const d = decideModel(s, 'm', memory());
      assert.equal(d.action === 'place' ? d.profile : null, c.placed, d.reason);
      assert.deepEqual(
        d.rejected.map((r) => r.profile),
        c.rejected,
      );
      for (const r of d.rejected) assert.equal(r.why, WHY);
      assert.deepEqual(d.pending, c.pending && [{ code: 'slo_unmet', profile: 'slow' }]);
      if (c.pending) assert.equal(d.reason, `scale up: 5 in flight and no replica; pending: ${c.pending}`);
    });
  }

  it('beside other reasons, the pending sentence names it too', () => {
    const big = profile('big', gpus(16));
    const s = loadOf(unservable([big, slow], [measured('m', 'slow', 0, 0)]), 'm', 5);
    const d = decideModel(s, 'm', memory());
    assert.deepEqual(d.pending, [
      { code: 'no_room', profile: 'big', needs: gpus(16) },
      { code: 'slo_unmet', profile: 'slow' },
    ]);
    assert.match(d.reason, /; pending: no room for big \(needs 16 GPUs\) and slow cannot meet its SLO$/);
    assert.deepEqual(
      d.rejected.map((r) => r.profile),
      ['big', 'slow'],
    );
  });

  it('its running replicas count 0 at SLO, and the model scales up on another profile, not on it', () => {
    const running = [0, 1].map((i) => replica(`z${i}`, { model: 'm', profile: slow, node: 'gpu-1' }));
    const d = decideModel(
      loadOf(unservable([slow, fast], [measured('m', 'slow', 0, 0)], { replicas: running }), 'm', 3),
      'm',
      memory(),
    );
    assert.equal(d.inputs.capacity_at_slo, 0);
    assert.equal(d.profile, 'fast');
    assert.match(d.reason, /^scale up: 3 in flight > 0 at SLO on 2 replicas; placed fast on gpu-1$/);
  });
});
