// Where a model's next replica goes (POLICY.md "Choosing a profile"): chooseProfile over named cases.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Pending, ProfileRejection } from '../../../src/domain/decision.ts';
import type { ModelMemory, Snapshot } from '../../../src/domain/snapshot.ts';
import { chooseProfile } from '../../../src/policy/choose-profile.ts';
import { nextClaim } from '../../../src/policy/claims.ts';
import { decideModel } from '../../../src/policy/decide.ts';
import { modelFigures } from '../../../src/policy/model-figures.ts';
import { buildView } from '../../../src/policy/view.ts';
import {
  apply,
  chat,
  chatNodes,
  chatScene,
  cores,
  gpus,
  h100,
  loadOf,
  measured,
  memory,
  model,
  NOW,
  profile,
  quota,
  replicaOn,
  SECOND,
  settle,
} from './fixtures.ts';

type Outcome =
  | { action: 'place'; profile: string; node: string; rejected: ProfileRejection[] }
  | {
      action: 'reclaim';
      profile: string;
      node: string;
      victims: string[];
      for: string;
      rejected: ProfileRejection[];
    }
  | { action: 'none'; pending: Pending[]; rejected: ProfileRejection[] };

interface Case {
  s: Snapshot;
  /** chat unless told. */
  model?: string;
  memory?: ModelMemory;
  /** Only the target throughput asks for the replica. */
  measuredOnly?: boolean;
  want: Outcome;
}

function choose(c: Omit<Case, 'want'>): Outcome {
  const view = buildView(c.s);
  const m = view.models.get(c.model ?? 'chat')!;
  const { profiles } = modelFigures(view, m);
  const serving = view.replicasOfModel(m.name).filter((r) => r.state !== 'draining').length;
  const claim = nextClaim(m, serving);
  const choice = chooseProfile(view, m, profiles, c.memory ?? memory(), c.measuredOnly ?? false, claim);
  const { rejected } = choice;
  if (choice.action === 'place')
    return { action: 'place', profile: choice.profile.name, node: choice.node, rejected };
  if (choice.action === 'reclaim') {
    const { node, victims, for: scope } = choice.plan;
    const ids = victims.map((v) => v.replica);
    return { action: 'reclaim', profile: choice.profile.name, node, victims: ids, for: scope, rejected };
  }
  if (choice.action === 'preempt') throw new Error('these cases preempt nothing');
  return { action: 'none', pending: choice.pending, rejected };
}

const gpuOnly = { ...chat, profiles: [h100] };
/** web (team Beta / web) borrows every H100: an 8-GPU replica on gpu-1 and gpu-2, four of 2 GPUs on gpu-3. */
const web = model(
  'web',
  [
    profile('w8', gpus(8, { cores: 8 }), { gpu_model: 'H100' }),
    profile('w2', gpus(2), { gpu_model: 'H100' }),
  ],
  { owner: 'team:web' },
);
const [w8, w2] = web.profiles;
const webEverywhere = () => [
  replicaOn('w-1', w8, 'gpu-1', 'ready', web),
  replicaOn('w-2', w8, 'gpu-2', 'ready', web),
  ...[1, 2, 3, 4].map((i) => replicaOn(`w-3-${i}`, w2, 'gpu-3', 'ready', web)),
];
const full = (parts: Partial<Snapshot> = {}) =>
  chatScene({ models: [chat, web], replicas: webEverywhere(), ...parts });
const noRoomForH100: Pending = { code: 'no_room', profile: 'vllm-h100', needs: h100.resources };

describe('chooseProfile: the profile, node or reclaim of the next replica', () => {
  const cases: Record<string, Case> = {
    'the first profile in trial order, on the node it fits best (fewest GPUs left)': {
      s: chatScene(),
      want: { action: 'place', profile: 'vllm-h100', node: 'gpu-1', rejected: [] },
    },
    'a backed-off profile is passed over for the next': {
      s: chatScene(),
      memory: memory(null, { 'vllm-h100': NOW + 30 * SECOND }),
      want: {
        action: 'place',
        profile: 'cpu-llama',
        node: 'cpu-1',
        rejected: [{ profile: 'vllm-h100', why: 'backed off for 30 s more after failed starts or crashes' }],
      },
    },
    'a backoff that has run out is tried again': {
      s: chatScene(),
      memory: memory(null, { 'vllm-h100': NOW }),
      want: { action: 'place', profile: 'vllm-h100', node: 'gpu-1', rejected: [] },
    },
    'a limit on the chain passes over to the next profile, and names the scope': {
      s: chatScene({ quotas: [quota('team:ml', undefined, gpus(6))] }),
      want: {
        action: 'place',
        profile: 'cpu-llama',
        node: 'cpu-1',
        rejected: [{ profile: 'vllm-h100', why: 'limit of team Acme / ml: holds 6 GPUs + 2 > 6' }],
      },
    },
    'only the target asks: an unmeasured profile is passed over, it adds no known throughput': {
      s: chatScene(),
      memory: memory(null, { 'vllm-h100': NOW + SECOND }),
      measuredOnly: true,
      want: {
        action: 'none',
        pending: [
          { code: 'backoff', profile: 'vllm-h100' },
          { code: 'unmeasured', profile: 'cpu-llama' },
        ],
        rejected: [
          { profile: 'vllm-h100', why: 'backed off for 1 s more after failed starts or crashes' },
          { profile: 'cpu-llama', why: 'not measured, so it adds no known throughput toward the target' },
        ],
      },
    },
    'a profile measured as unable to meet its SLO is never placed': {
      s: chatScene({ models: [gpuOnly], measurements: [measured('chat', 'vllm-h100', 0, 0)] }),
      want: {
        action: 'none',
        pending: [{ code: 'slo_unmet', profile: 'vllm-h100' }],
        rejected: [
          {
            profile: 'vllm-h100',
            why: 'not servable: measured as unable to meet its SLO at any concurrency (max_concurrency_at_slo 0); bench it again to use it',
          },
        ],
      },
    },
    'no room, the owner within its guarantee: it reclaims for the preferred profile before trying the next': {
      s: full(),
      want: {
        action: 'reclaim',
        profile: 'vllm-h100',
        node: 'gpu-3',
        victims: ['w-3-4'],
        for: 'team:ml',
        rejected: [],
      },
    },
    'no room, the owner beyond its guarantee: the next profile': {
      s: full({ quotas: [quota('team:ml', gpus(1))] }),
      want: {
        action: 'place',
        profile: 'cpu-llama',
        node: 'cpu-1',
        rejected: [
          {
            profile: 'vllm-h100',
            why: 'no room for vllm-h100 (needs 2 GPUs, 16 cores), and the owner is not within a guarantee for it, so it waits',
          },
        ],
      },
    },
    'no room and nothing borrowed to reclaim: the next profile': {
      s: full({ quotas: [quota('team:ml', gpus(8)), quota('org:beta', gpus(24, { cores: 16 }))] }),
      want: {
        action: 'place',
        profile: 'cpu-llama',
        node: 'cpu-1',
        rejected: [
          {
            profile: 'vllm-h100',
            why: 'no room for vllm-h100 (needs 2 GPUs, 16 cores) and nothing borrowed to reclaim for team Acme / ml',
          },
        ],
      },
    },
    'a node cordoned or of another GPU model has no room for it': {
      s: chatScene({
        models: [gpuOnly],
        quotas: [],
        nodes: chatNodes.map((n) =>
          n.name === 'gpu-1' ? { ...n, state: 'cordoned' as const } : { ...n, gpu_model: 'A100' },
        ),
      }),
      want: {
        action: 'none',
        pending: [noRoomForH100],
        rejected: [
          {
            profile: 'vllm-h100',
            why: 'no room for vllm-h100 (needs 2 GPUs, 16 cores), and the owner is not within a guarantee for it, so it waits',
          },
        ],
      },
    },
    'nothing fits: what each profile waits for, in trial order': {
      s: chatScene({
        quotas: [quota('org:acme', undefined, gpus(6))],
        nodes: chatNodes.map((n) =>
          n.gpu_model ? { ...n, state: 'cordoned' as const } : { ...n, capacity: cores(8) },
        ),
      }),
      want: {
        action: 'none',
        pending: [
          {
            code: 'limit',
            profile: 'vllm-h100',
            scope: 'org:acme',
            scope_label: 'org Acme',
            resource: 'gpus',
          },
          { code: 'no_room', profile: 'cpu-llama', needs: cores(16) },
        ],
        rejected: [
          { profile: 'vllm-h100', why: 'limit of org Acme: holds 6 GPUs + 2 > 6' },
          {
            profile: 'cpu-llama',
            why: 'no room for cpu-llama (needs 16 cores), and the owner is not within a guarantee for it, so it waits',
          },
        ],
      },
    },
    'a model without profiles waits for one': {
      s: chatScene({ models: [{ ...chat, profiles: [] }], replicas: [] }),
      want: { action: 'none', pending: [{ code: 'no_profile' }], rejected: [] },
    },
  };
  for (const [name, c] of Object.entries(cases)) it(name, () => assert.deepEqual(choose(c), c.want));
});

describe('chooseProfile does not flap', () => {
  // web (team Beta / web) fills the three H100 nodes with 4-GPU replicas; its guarantee of 8 GPUs
  // protects the two oldest, on gpu-1. chat (team Acme / ml, guaranteed 8) reclaims on gpu-2.
  const w4 = profile('w4', gpus(4), { gpu_model: 'H100' });
  const guarded = model('web', [w4], { owner: 'team:web' });
  const crowded = loadOf(
    chatScene({
      models: [gpuOnly, guarded],
      quotas: [quota('team:ml', gpus(8)), quota('team:web', gpus(8))],
      replicas: ['gpu-1', 'gpu-1', 'gpu-2', 'gpu-2', 'gpu-3', 'gpu-3'].map((n, i) =>
        replicaOn(`w${i}`, w4, n, 'ready', guarded),
      ),
    }),
    'chat',
    5,
  );
  const reclaimed = apply(crowded, decideModel(crowded, 'chat', memory()));
  const webWaits: Outcome = {
    action: 'none',
    pending: [{ code: 'no_room', profile: 'w4', needs: gpus(4) }],
    rejected: [
      {
        profile: 'w4',
        why: 'no room for w4 (needs 4 GPUs), and the owner is not within a guarantee for it, so it waits',
      },
    ],
  };

  const cases: Record<string, Case> = {
    'the reclaim: the newest borrowed replica on the node of the fewest victims': {
      s: crowded,
      want: {
        action: 'reclaim',
        profile: 'vllm-h100',
        node: 'gpu-2',
        victims: ['w3'],
        for: 'team:ml',
        rejected: [],
      },
    },
    'the victim’s model, beyond its guarantee, does not take it back while its victim drains': {
      s: reclaimed,
      model: 'web',
      want: webWaits,
    },
    'nor once the victim stopped and the reclaimed replica runs': {
      s: settle(reclaimed),
      model: 'web',
      want: webWaits,
    },
    'the reclaimer, asked again while its replica waits, takes the room left and no second victim': {
      s: reclaimed,
      want: {
        action: 'reclaim',
        profile: 'vllm-h100',
        node: 'gpu-2',
        victims: [],
        for: 'team:ml',
        rejected: [],
      },
    },
  };
  for (const [name, c] of Object.entries(cases)) it(name, () => assert.deepEqual(choose(c), c.want));
});
