import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Replica } from '../../../src/domain/cluster.ts';
import type { Decision } from '../../../src/domain/decision.ts';
import type { Model, Profile } from '../../../src/domain/model.ts';
import type { ModelMemory, Snapshot } from '../../../src/domain/snapshot.ts';
import { decideModel } from '../../../src/policy/decide.ts';
import {
  apply,
  cores,
  gpus,
  loadOf,
  measured,
  memory,
  model,
  NOW,
  node,
  org,
  profile,
  project,
  quota,
  replica,
  SECOND,
  settle,
  team,
  withOwner,
  world,
} from './fixtures.ts';

const scopes = [
  org('acme', 'Acme'),
  team('ml', 'acme'),
  project('training', 'ml'),
  org('beta', 'Beta'),
  team('web', 'beta'),
];
const h100 = profile('vllm-h100', gpus(2, { cores: 16 }), { priority: 10, gpu_model: 'H100' });
const cpuLlama = profile('cpu-llama', cores(16), { default_concurrency: 4 });
const chat = model('chat', [h100, cpuLlama], { owner: 'team:ml', max_replicas: 6 });
const nodes = [
  node('gpu-1', gpus(8, { cores: 96 }), { gpu_model: 'H100' }),
  node('gpu-2', gpus(8, { cores: 96 }), { gpu_model: 'H100' }),
  node('gpu-3', gpus(8, { cores: 96 }), { gpu_model: 'H100' }),
  node('cpu-1', cores(64)),
];
const at = (id: string, p: Profile, n: string, state: Replica['state'] = 'ready', m: Model = chat) =>
  replica(id, { model: m.name, profile: p, node: n }, { state });
/** Three ready vllm-h100 replicas of chat (C = 30, 3000 tokens/s): gpu-1 keeps 4 GPUs free, gpu-2 6. */
const three = () => [at('r1', h100, 'gpu-1'), at('r2', h100, 'gpu-1'), at('r3', h100, 'gpu-2')];

function scene(parts: Partial<Snapshot> & { inFlight?: number; loadAge?: number } = {}): Snapshot {
  const { inFlight, loadAge, ...rest } = parts;
  const s = world({
    scopes,
    quotas: [quota('team:ml', gpus(8), gpus(16))],
    models: [chat],
    measurements: [measured('chat', 'vllm-h100', 10, 1000)],
    nodes,
    replicas: three(),
    ...rest,
  });
  return inFlight === undefined ? s : loadOf(s, 'chat', inFlight, loadAge);
}

const decide = (s: Snapshot, mem: ModelMemory = memory(), name = 'chat') => decideModel(s, name, mem);
const pick = (d: Decision) => ({
  action: d.action,
  profile: d.profile,
  node: d.node,
  replica: d.replica,
  pending: d.pending,
});

describe('scaling up', () => {
  it('adds a replica when load passes capacity, placed best fit, with one sentence why', () => {
    const d = decide(scene({ inFlight: 34 }));
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
    assert.deepEqual(d.memory, { scaleDownSince: null });
  });

  it('carries the inputs that mattered', () => {
    const d = decide(scene({ inFlight: 34 }));
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
    const s = scene();
    const d = decide({ ...s, load: { chat: { in_flight: 28, waiting: 3, reported_at: NOW } } });
    assert.equal(d.action, 'place');
    assert.match(d.reason, /^scale up: 31 in flight > 30/);
  });

  it('from zero replicas any load adds one', () => {
    const d = decide(scene({ replicas: [], inFlight: 1 }));
    assert.equal(d.action, 'place');
    assert.match(d.reason, /^scale up: 1 in flight and no replica; placed vllm-h100 on gpu-1/);
  });

  it('no load and no replica: nothing', () => {
    assert.equal(decide(scene({ replicas: [], inFlight: 0 })).action, 'none');
  });

  it('up to min_replicas whatever the load', () => {
    const s = scene({ replicas: [], models: [{ ...chat, min_replicas: 2 }] });
    const d = decide(s);
    assert.equal(d.action, 'place');
    assert.match(d.reason, /^scale up: 0 replicas < min_replicas 2/);
  });

  it('stale load: no scaling on it', () => {
    const d = decide(scene({ inFlight: 100, loadAge: 61 * SECOND }));
    assert.equal(d.action, 'none');
    assert.equal(d.inputs.in_flight, null);
    assert.match(d.reason, /load unknown \(last report 61 s ago\)/);
  });

  it('stale load: min_replicas still holds', () => {
    const s = scene({
      inFlight: 0,
      loadAge: 61 * SECOND,
      replicas: [at('r1', h100, 'gpu-1')],
      models: [{ ...chat, min_replicas: 2 }],
    });
    assert.equal(decide(s).action, 'place');
  });

  it('load exactly at the staleness bound still counts', () => {
    assert.equal(decide(scene({ inFlight: 34, loadAge: 60 * SECOND })).action, 'place');
  });

  it('max_replicas reached: pending says so', () => {
    const d = decide(scene({ inFlight: 34, models: [{ ...chat, max_replicas: 3 }] }));
    assert.equal(d.action, 'none');
    assert.equal(d.pending, 'max_replicas 3 reached');
    assert.equal(
      d.reason,
      'scale up: 34 in flight > 30 at SLO on 3 replicas; pending: max_replicas 3 reached',
    );
  });

  it('target throughput: up while the measured throughput is below it, at low load', () => {
    const d = decide(scene({ inFlight: 1, models: [{ ...chat, target_tokens_per_sec: 3500 }] }));
    assert.equal(d.action, 'place');
    assert.match(d.reason, /^scale up: 3000 tokens\/s < target 3500 tokens\/s on 3 replicas/);
  });

  it('target throughput: an unmeasured profile adds no known throughput, so it is not added for it', () => {
    const only = model('solo', [cpuLlama], { target_tokens_per_sec: 100 });
    const d = decide(scene({ models: [only], replicas: [] }), memory(), 'solo');
    assert.equal(d.action, 'none');
    assert.equal(d.pending, 'cpu-llama is not measured');
  });

  it('a backed-off profile falls back to the next', () => {
    const d = decide(scene({ inFlight: 34 }), memory(null, { 'vllm-h100': NOW + 30 * SECOND }));
    assert.deepEqual(pick(d), {
      action: 'place',
      profile: 'cpu-llama',
      node: 'cpu-1',
      replica: undefined,
      pending: undefined,
    });
    assert.deepEqual(d.rejected, [
      { profile: 'vllm-h100', why: 'backed off for 30 s more after failed starts' },
    ]);
  });

  it('a backoff that has run out is tried again', () => {
    assert.equal(decide(scene({ inFlight: 34 }), memory(null, { 'vllm-h100': NOW })).profile, 'vllm-h100');
  });

  it('a limit on the chain sends on to the next profile, and says which', () => {
    const d = decide(scene({ inFlight: 34, quotas: [quota('team:ml', undefined, gpus(6))] }));
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
    const cpuFull = [1, 2, 3, 4].map((i) => at(`c${i}`, cpuLlama, 'cpu-1', 'ready', other));
    const d = decide(
      scene({
        inFlight: 34,
        quotas: [quota('org:acme', undefined, gpus(6))],
        models: [chat, other],
        nodes: nodes.map((n) => (n.gpu_model ? { ...n, state: 'cordoned' as const } : n)),
        replicas: [...three(), ...cpuFull],
      }),
    );
    assert.equal(d.action, 'none');
    assert.equal(d.pending, 'a limit of org Acme stops vllm-h100 and no room for cpu-llama (needs 16 cores)');
    assert.equal(
      d.reason,
      'scale up: 34 in flight > 30 at SLO on 3 replicas; pending: a limit of org Acme stops vllm-h100 and no room for cpu-llama (needs 16 cores)',
    );
    assert.equal(d.rejected.length, 2);
  });

  it('a limit lowered below what is held: nothing stops, no new replica', () => {
    const gpuOnly = { ...chat, profiles: [h100] };
    const d = decide(
      scene({ inFlight: 34, models: [gpuOnly], quotas: [quota('team:ml', undefined, gpus(4))] }),
    );
    assert.equal(d.action, 'none');
    assert.equal(d.pending, 'a limit of team Acme / ml stops vllm-h100');
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
    scene({
      inFlight: 5,
      models: [gpuOnly, web],
      replicas: [
        at('w-1', w8, 'gpu-1', 'ready', web),
        at('w-2', w8, 'gpu-2', 'ready', web),
        ...[1, 2, 3, 4].map((i) => at(`w-3-${i}`, w2, 'gpu-3', 'ready', web)),
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
    assert.equal(d.pending, 'no room for vllm-h100 (needs 2 GPUs, 16 cores)');
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
    assert.equal(d.pending, 'no room for vllm-h100 (needs 2 GPUs, 16 cores)');
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
  const idle = (since: number | null, parts: Parameters<typeof scene>[0] = {}) =>
    decide(scene({ inFlight: 3, ...parts }), memory(since));

  it('starts the window when the condition starts to hold', () => {
    const d = idle(null);
    assert.equal(d.action, 'none');
    assert.deepEqual(d.memory, { scaleDownSince: NOW });
    assert.equal(
      d.reason,
      'steady: 3 in flight <= 70% of 20 at SLO without replica r3 for 0 s of the 120 s window',
    );
  });

  it('held 119 s: nothing yet, the window is kept', () => {
    const d = idle(NOW - 119 * SECOND);
    assert.equal(d.action, 'none');
    assert.deepEqual(d.memory, { scaleDownSince: NOW - 119 * SECOND });
  });

  it('held 120 s: removes the newest, and the next removal waits a new window', () => {
    const d = idle(NOW - 120 * SECOND);
    assert.equal(d.action, 'remove');
    assert.equal(d.replica, 'r3');
    assert.equal(
      d.reason,
      'scale down: 3 in flight <= 70% of 20 at SLO without replica r3 for 120 s; removing r3',
    );
    assert.deepEqual(d.memory, { scaleDownSince: null });
  });

  it('the window breaks when the condition does', () => {
    const d = idle(NOW - 119 * SECOND, { inFlight: 15 });
    assert.equal(d.action, 'none');
    assert.deepEqual(d.memory, { scaleDownSince: null });
  });

  it('no scale-down while a replica is starting', () => {
    const d = idle(NOW - 600 * SECOND, { replicas: [...three(), at('r4', h100, 'gpu-3', 'starting')] });
    assert.equal(d.action, 'none');
    assert.deepEqual(d.memory, { scaleDownSince: null });
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
    const d = idle(NOW - 120 * SECOND, { inFlight: 0, replicas: [at('r1', h100, 'gpu-1')] });
    assert.equal(d.action, 'remove');
    assert.match(d.reason, /^scale down: 0 in flight <= 70% of 0 at SLO without replica r1/);
  });

  it('replicas beyond max_replicas are removed at once, newest first', () => {
    const d = decide(scene({ inFlight: 100, models: [{ ...chat, max_replicas: 2 }] }));
    assert.equal(d.action, 'remove');
    assert.equal(d.replica, 'r3');
    assert.equal(d.reason, 'scale down: 3 replicas > max_replicas 2; removing r3');
  });

  describe('which replica goes', () => {
    const mixed = () => [
      at('g1', h100, 'gpu-1'),
      at('g2', h100, 'gpu-1'),
      at('c1', cpuLlama, 'cpu-1'),
      at('c2', cpuLlama, 'cpu-1'),
    ];
    const gone = (parts: Parameters<typeof scene>[0]) =>
      idle(NOW - 120 * SECOND, { inFlight: 0, ...parts }).replica;

    it('the least preferred profile first, then the newest', () => {
      assert.equal(gone({ replicas: mixed() }), 'c2');
    });

    it('while a scope on the chain holds more than its limit: the newest replica using the dimension it passes', () => {
      assert.equal(gone({ replicas: mixed(), quotas: [quota('org:acme', undefined, gpus(2))] }), 'g2');
    });

    it('a limit that is not passed changes nothing', () => {
      assert.equal(gone({ replicas: mixed(), quotas: [quota('org:acme', undefined, gpus(4))] }), 'c2');
    });

    it('a borrowed replica before a protected one, even when it is older', () => {
      const big = profile('big', gpus(4), { priority: 10 });
      const m = { ...chat, profiles: [h100, big] };
      const replicas = [at('old-big', big, 'gpu-2'), at('new-small', h100, 'gpu-1')];
      // G = 2 GPUs: old-big (4) does not fit and is borrowed; new-small fits and is protected.
      assert.equal(gone({ models: [m], replicas, quotas: [quota('team:ml', gpus(2))] }), 'old-big');
    });

    it('a profile gone from the spec counts as least preferred', () => {
      const replicas = [at('x', profile('retired', gpus(1)), 'gpu-3'), ...mixed()];
      assert.equal(gone({ replicas, quotas: [] }), 'x');
    });
  });
});

describe('does not flap', () => {
  it('after a scale-up, the next pass at the same load does nothing', () => {
    let s = scene({ inFlight: 34 });
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
    let s = scene({
      models: [{ ...chat, profiles: [h100] }, web],
      quotas: [quota('team:ml', gpus(8)), quota('team:web', gpus(8))],
      replicas: ['gpu-1', 'gpu-1', 'gpu-2', 'gpu-2', 'gpu-3', 'gpu-3'].map((n, i) =>
        at(`w${i}`, w4, n, 'ready', web),
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
    const a = model('a', [profile('pa', gpus(2))], { owner: 'project:pa', max_replicas: 8 });
    const b = model('b', [profile('pb', gpus(2))], { owner: 'project:pb', max_replicas: 8 });
    const guest = model('guest', [profile('g', gpus(2))], { owner: 'org:beta', max_replicas: 8 });
    let s = world({
      scopes: [
        org('acme', 'Acme'),
        team('ml', 'acme'),
        project('pa', 'ml'),
        project('pb', 'ml'),
        org('beta', 'Beta'),
      ],
      quotas: [quota('team:ml', gpus(8))],
      models: [a, b, guest],
      nodes: [node('n1', gpus(8)), node('n2', gpus(8))],
      replicas: Array.from({ length: 8 }, (_, i) =>
        at(`g${i}`, guest.profiles[0], i < 4 ? 'n1' : 'n2', 'ready', guest),
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
  const d = decide(scene(), memory(), 'nope');
  assert.equal(d.action, 'none');
  assert.equal(d.reason, 'there is no model "nope"');
});
