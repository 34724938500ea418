// Invariants of the decisions over random tenancy trees, quotas, clusters, models and event sequences.
// Holds, protection and room are recomputed here the plain way (per scope, per node) as an oracle.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { ClusterNode, Replica } from '../../../src/domain/cluster.ts';
import { type Decision, RESERVING_ACTIONS } from '../../../src/domain/decision.ts';
import type { Model, Profile } from '../../../src/domain/model.ts';
import type { Quota } from '../../../src/domain/quota.ts';
import type { Resources } from '../../../src/domain/resources.ts';
import type { Scope, ScopeKey } from '../../../src/domain/scope.ts';
import { DEFAULT_POLICY_SETTINGS, type ModelMemory, type Snapshot } from '../../../src/domain/snapshot.ts';
import { burstRefusal, decideBurst } from '../../../src/policy/burst.ts';
import { decideModel } from '../../../src/policy/decide.ts';
import { add, fitsWithin, subtract, sum, usesAnyOf } from '../../../src/policy/resources.ts';
import { buildView } from '../../../src/policy/view.ts';
import {
  apply,
  cores,
  gpus,
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
  world,
} from './fixtures.ts';
import { chainOf, checkNodes, full, holds, hostable, isActive, onNode, protectedIds } from './oracle.ts';

/** Checks one decision against the state it was made on. */
function checkDecision(s: Snapshot, d: Decision) {
  const m = s.models.find((x) => x.name === d.model)!;
  const serving = s.replicas.filter(
    (r) => r.model === m.name && ['pending', 'starting', 'ready'].includes(r.state),
  );
  if (d.action !== 'place' && d.action !== 'reclaim') return;
  assert.ok(serving.length < m.max_replicas, 'no replica beyond max_replicas');
  const r = d.resources!;
  const p = m.profiles.find((x) => x.name === d.profile);
  const n = s.nodes.find((x) => x.name === d.node);
  assert.ok(hostable(n, p), `${d.node} can host ${d.profile}`);
  for (const scope of chainOf(s, m.owner)) {
    const limit = s.quotas.find((q) => q.scope === scope)?.limit;
    if (limit)
      assert.ok(fitsWithin(add(holds(s, scope), r), limit), `no new replica passes the limit of ${scope}`);
  }
  const free = subtract(full(n!), onNode(s, n!.name, isActive));
  if (d.action === 'place') {
    assert.ok(fitsWithin(r, free), `${d.node} has room (draining replicas and reservations hold theirs)`);
    return;
  }
  const guarded = protectedIds(s);
  for (const v of d.victims!) {
    const victim = s.replicas.find((x) => x.id === v.replica)!;
    assert.ok(!guarded.has(v.replica), `victim ${v.replica} is borrowed`);
    assert.notEqual(victim.model, m.name, 'never its own replica');
    assert.notEqual(victim.state, 'draining');
    assert.ok(isActive(victim));
    assert.equal(victim.node, d.node);
  }
  // Room counts as it will be once what drains has stopped (its room frees anyway).
  const afterDrains = subtract(
    full(n!),
    onNode(s, n!.name, (x) => isActive(x) && x.state !== 'draining'),
  );
  const freed = sum(d.victims!.map((v) => v.resources));
  assert.ok(fitsWithin(r, add(afterDrains, freed)), 'the victims free enough room');
  for (const v of d.victims!) {
    const rest = sum(d.victims!.filter((other) => other !== v).map((other) => other.resources));
    assert.ok(!fitsWithin(r, add(afterDrains, rest)), `victim ${v.replica} is not spare`);
  }
  const scope = d.reclaim_for!;
  const guarantee = s.quotas.find((q) => q.scope === scope)?.guarantee;
  assert.ok(
    chainOf(s, m.owner).includes(scope) && guarantee,
    'reclaims for a scope of its chain with a guarantee',
  );
  assert.ok(
    usesAnyOf(r, guarantee!) && fitsWithin(add(holds(s, scope), r), guarantee!),
    'the reclaimer is within its guarantee',
  );
}

/**
 * What each victim's model reclaims back from the reclaimer when replayed right after the reclaim. A
 * preemption is not taking back: a higher claim may take the reclaimer's borrowed replicas (its own
 * rules are checked below and in preempt-properties).
 */
function takenBack(s: Snapshot, d: Decision, memories?: Map<string, ModelMemory>) {
  return [...new Set(d.victims!.map((v) => v.model))].flatMap((victimModel) => {
    const replay = decideModel(s, victimModel, memories?.get(victimModel) ?? memory());
    return replay.action === 'reclaim' ? replay.victims!.filter((v) => v.model === d.model) : [];
  });
}

/**
 * No ping-pong after a reclaim for scope S: the reserved replica is protected, and no victim's model,
 * replayed on the new state, takes back from the reclaimer a replica that uses a dimension G(S) sets.
 * (A replica that uses none, e.g. a CPU-only one under a GPU-only guarantee, is borrowed by definition
 * and anyone within a guarantee may reclaim it; each such reclaim fills that guarantee, so it ends.)
 */
function checkNoReclaimBack(s: Snapshot, d: Decision, memories: Map<string, ModelMemory>) {
  const reserved = s.replicas.at(-1)!;
  assert.ok(protectedIds(s).has(reserved.id), 'the reserved replica is protected');
  const guarantee = s.quotas.find((q) => q.scope === d.reclaim_for)!.guarantee!;
  for (const v of takenBack(s, d, memories)) {
    assert.ok(
      !usesAnyOf(v.resources, guarantee),
      `a victim's model reclaims ${v.replica} back from ${d.model}`,
    );
  }
}

// ---- generators -------------------------------------------------------------------------------------

const amount = (max: number) => fc.option(fc.integer({ min: 0, max }), { nil: undefined });
const resources = fc
  .record({
    gpus: amount(12),
    cores: fc.option(fc.integer({ min: 0, max: 48 }), { nil: undefined, freq: 2 }),
  })
  .map((r) => {
    const out: Resources = {};
    if (r.gpus !== undefined) out.gpus = r.gpus;
    if (r.cores !== undefined) out.cores = r.cores;
    return out;
  });

/** A guarantee and a limit with the guarantee never above the limit. */
const quotaOf = (scope: ScopeKey) =>
  fc
    .record({
      guarantee: fc.option(resources, { nil: undefined }),
      limit: fc.option(resources, { nil: undefined }),
    })
    .map(({ guarantee, limit }): Quota => {
      if (guarantee && limit)
        for (const d of ['gpus', 'cores'] as const) {
          if (guarantee[d] !== undefined && limit[d] !== undefined)
            limit[d] = Math.max(limit[d]!, guarantee[d]!);
        }
      return { scope, ...(guarantee && { guarantee }), ...(limit && { limit }) };
    });

const tree = fc
  .array(fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 2 }), { minLength: 1, maxLength: 3 })
  .map((orgs) => {
    const scopes: Scope[] = [];
    orgs.forEach((teams, o) => {
      scopes.push(org(`o${o}`, `Org${o}`));
      teams.forEach((projects, t) => {
        scopes.push(team(`o${o}t${t}`, `o${o}`, `t${t}`));
        for (let p = 0; p < projects; p++) scopes.push(project(`o${o}t${t}p${p}`, `o${o}t${t}`, `p${p}`));
      });
    });
    return scopes;
  });

const clusterNode = (i: number) =>
  fc
    .record({
      gpus: fc.constantFrom(0, 1, 2, 4, 8, 8),
      cores: fc.constantFrom(8, 16, 32, 64),
      gpuModel: fc.constantFrom('A', 'A', 'B'),
      state: fc.constantFrom('ready', 'ready', 'ready', 'ready', 'ready', 'ready', 'cordoned', 'down'),
    })
    .map(
      ({ gpus, cores, gpuModel, state }): ClusterNode => ({
        name: `n${i}`,
        capacity: gpus ? { gpus, cores } : { cores },
        gpu_model: gpus ? gpuModel : null,
        labels: {},
        state: state as ClusterNode['state'],
      }),
    );

const profileOf = (i: number, gpusOnly: boolean) =>
  fc
    .record({
      gpus: gpusOnly ? fc.integer({ min: 1, max: 4 }) : fc.constantFrom(0, 0, 1, 2, 4),
      cores: fc.integer({ min: 1, max: 16 }),
      gpuModel: fc.constantFrom(undefined, undefined, undefined, 'A', 'B'),
      priority: fc.integer({ min: 0, max: 2 }),
      concurrency: fc.option(fc.integer({ min: 1, max: 12 }), { nil: undefined }),
    })
    .map(
      ({ gpus, cores, gpuModel, priority, concurrency }): Profile => ({
        name: `p${i}`,
        priority,
        resources: gpus ? { gpus, cores } : { cores },
        ...(gpus && gpuModel && { gpu_model: gpuModel }),
        ...(concurrency && { default_concurrency: concurrency }),
      }),
    );

const modelOf = (i: number, owners: (ScopeKey | null)[], gpusOnly: boolean) =>
  fc
    .record({
      owner: fc.constantFrom(...owners),
      min: fc.integer({ min: 0, max: 1 }),
      max: fc.integer({ min: 1, max: 4 }),
      target: fc.option(fc.integer({ min: 100, max: 3000 }), { nil: undefined, freq: 4 }),
      profiles: fc.array(fc.nat(), { minLength: 1, maxLength: 2 }),
      measuredTokens: fc.array(fc.option(fc.integer({ min: 50, max: 1500 }), { nil: undefined }), {
        minLength: 2,
        maxLength: 2,
      }),
    })
    .chain(({ profiles, ...rest }) =>
      fc.tuple(...profiles.map((_, p) => profileOf(p, gpusOnly))).map((ps) => ({ ...rest, profiles: ps })),
    )
    .map(({ owner, min, max, target, profiles, measuredTokens }) => ({
      model: {
        name: `m${i}`,
        owner,
        min_replicas: min,
        max_replicas: max,
        ...(target && { target_tokens_per_sec: target }),
        profiles,
      } as Model,
      measurements: profiles.flatMap((p, k) =>
        measuredTokens[k]
          ? [measured(`m${i}`, p.name, 2 + (measuredTokens[k]! % 10), measuredTokens[k]!)]
          : [],
      ),
    }));

type Event =
  | { kind: 'decide'; model: number; passes: number }
  | { kind: 'load'; model: number; inFlight: number }
  | { kind: 'settle' }
  | { kind: 'time'; ms: number }
  | { kind: 'quota'; scope: number; quota: Quota | null }
  | { kind: 'owner'; model: number; owner: number }
  | { kind: 'max'; model: number; max: number };

const events = (scopes: Scope[], models: number, churn: boolean) =>
  fc.array(
    fc.oneof(
      {
        weight: 8,
        arbitrary: fc.record({
          kind: fc.constant('decide' as const),
          model: fc.nat(models - 1),
          passes: fc.integer({ min: 1, max: 4 }),
        }),
      },
      {
        weight: 3,
        arbitrary: fc.record({
          kind: fc.constant('load' as const),
          model: fc.nat(models - 1),
          inFlight: fc.oneof(
            fc.constant(0),
            fc.integer({ min: 1, max: 10 }),
            fc.integer({ min: 10, max: 80 }),
          ),
        }),
      },
      { weight: 2, arbitrary: fc.constant({ kind: 'settle' as const }) },
      {
        weight: 2,
        arbitrary: fc.record({
          kind: fc.constant('time' as const),
          ms: fc.integer({ min: 0, max: 90 * SECOND }),
        }),
      },
      {
        weight: churn ? 1 : 0,
        arbitrary: fc.nat(scopes.length - 1).chain((i) =>
          fc.record({
            kind: fc.constant('quota' as const),
            scope: fc.constant(i),
            quota: fc.option(quotaOf(scopes[i].key), { nil: null }),
          }),
        ),
      },
      {
        weight: churn ? 1 : 0,
        arbitrary: fc.record({
          kind: fc.constant('owner' as const),
          model: fc.nat(models - 1),
          owner: fc.nat(scopes.length),
        }),
      },
      {
        weight: 1,
        arbitrary: fc.record({
          kind: fc.constant('max' as const),
          model: fc.nat(models - 1),
          max: fc.integer({ min: 1, max: 4 }),
        }),
      },
    ),
    { minLength: 10, maxLength: 50 },
  );

/** Ready replicas of the models' first profiles, first fit, within max_replicas: a busy cluster to start from. */
function prefilled(nodes: ClusterNode[], models: Model[]): Replica[] {
  const replicas: Replica[] = [];
  for (const [i, m] of models.entries()) {
    const p = m.profiles[0];
    if (replicas.filter((r) => r.model === m.name).length >= m.max_replicas) continue;
    const room = (n: ClusterNode) =>
      subtract(full(n), sum(replicas.filter((r) => r.node === n.name).map((r) => r.resources)));
    const n = nodes.find((x) => hostable(x, p) && fitsWithin(p.resources, room(x)));
    if (!n) continue;
    replicas.push({
      id: `seed-${i}`,
      model: m.name,
      profile: p.name,
      node: n.name,
      resources: p.resources,
      state: 'ready',
      created_at: NOW - 1000 + i,
    });
  }
  return replicas;
}

interface Scenario {
  start: Snapshot;
  events: Event[];
}

const scenario = (options: { gpusOnly: boolean; churn: boolean; trees?: fc.Arbitrary<Scope[]> }) =>
  (options.trees ?? tree).chain((scopes) =>
    fc
      .record({
        quotas: fc.tuple(...scopes.map((s) => fc.option(quotaOf(s.key), { nil: null }))),
        nodes: fc
          .integer({ min: 1, max: 3 })
          .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => clusterNode(i)))),
        models: fc
          .integer({ min: 2, max: 6 })
          .chain((n) =>
            fc.tuple(
              ...Array.from({ length: n }, (_, i) =>
                modelOf(i, [null, ...scopes.map((s) => s.key)], options.gpusOnly),
              ),
            ),
          ),
      })
      .chain(({ quotas, nodes, models }) =>
        fc
          .tuple(
            events(scopes, models.length, options.churn),
            fc.array(fc.nat(models.length - 1), { maxLength: 12 }),
          )
          .map(
            ([evs, prefill]): Scenario => ({
              start: world({
                scopes,
                quotas: quotas.filter((q): q is Quota => q !== null),
                nodes,
                models: models.map((m) => m.model),
                measurements: models.flatMap((m) => m.measurements),
                replicas: prefilled(
                  nodes,
                  prefill.map((i) => models[i].model),
                ),
                // A short window lets scale-down happen within a sequence.
                settings: { ...DEFAULT_POLICY_SETTINGS, scaleDownWindowMs: 30 * SECOND },
              }),
              events: evs,
            }),
          ),
      ),
  );

// ---- running a scenario -----------------------------------------------------------------------------

interface Run {
  decisions: { before: Snapshot; decision: Decision }[];
  /** Passes that placed more than one replica. */
  bursts: number;
}

function run(
  { start, events }: Scenario,
  check: (before: Snapshot, d: Decision, after: Snapshot) => void,
): Run {
  let s = start;
  const memories = new Map<string, ModelMemory>();
  const decisions: Run['decisions'] = [];
  let bursts = 0;
  for (const e of events) {
    if (e.kind === 'decide') {
      // The reconciler loops while it acts; a pass that places may place several (a burst), each as the
      // pass before it would have decided on the state the earlier ones left.
      const name = s.models[e.model].name;
      for (let pass = 0; pass < e.passes; pass++) {
        const mem = memories.get(name) ?? memory();
        const burst = decideBurst(buildView(s), name, mem);
        if (RESERVING_ACTIONS.includes(burst[0].action)) {
          const why = burstRefusal(buildView(s), burst);
          assert.equal(why, null, 'the lock accepts a burst planned on its state');
        }
        for (const [i, d] of burst.entries()) {
          if (i > 0)
            assert.deepEqual(brief(d), brief(decideModel(s, name, mem)), 'a burst is passes in a row');
          checkDecision(s, d);
          memories.set(name, { ...memory(), ...d.memory });
          const after = apply(s, d);
          checkNodes(after);
          if (d.action === 'reclaim') checkNoReclaimBack(after, d, memories);
          check(s, d, after);
          decisions.push({ before: s, decision: d });
          s = after;
        }
        if (burst.length > 1) bursts++;
        if (burst[0].action === 'none') break;
      }
    } else if (e.kind === 'load') {
      const name = s.models[e.model].name;
      s = { ...s, load: { ...s.load, [name]: { in_flight: e.inFlight, waiting: 0, reported_at: s.now } } };
    } else if (e.kind === 'settle') {
      s = settle(s);
      checkNodes(s);
    } else if (e.kind === 'time') {
      s = { ...s, now: s.now + e.ms };
    } else if (e.kind === 'quota') {
      const rest = s.quotas.filter((q) => q.scope !== s.scopes[e.scope].key);
      s = { ...s, quotas: e.quota ? [...rest, e.quota] : rest };
    } else if (e.kind === 'owner') {
      const owner = s.scopes[e.owner]?.key ?? null;
      s = { ...s, models: s.models.map((m, i) => (i === e.model ? { ...m, owner } : m)) };
    } else {
      s = { ...s, models: s.models.map((m, i) => (i === e.model ? { ...m, max_replicas: e.max } : m)) };
    }
  }
  return { decisions, bursts };
}

/** What a decision does, without its words. */
const brief = (d: Decision) => ({ action: d.action, profile: d.profile, node: d.node, victims: d.victims });

const NUM_RUNS = Number(process.env.POLICY_RUNS ?? 200);

describe('invariants over random worlds and event sequences', () => {
  it('hold after every step (load, quota and owner changes, decisions applied)', () => {
    const seen = { place: 0, reclaim: 0, preempt: 0, remove: 0, none: 0 };
    let seenBursts = 0;
    fc.assert(
      fc.property(scenario({ gpusOnly: false, churn: true }), (sc) => {
        const { decisions, bursts } = run(sc, () => {});
        for (const { decision } of decisions) seen[decision.action]++;
        seenBursts += bursts;
      }),
      { numRuns: NUM_RUNS },
    );
    assert.ok(seenBursts > 0, 'some passes place several replicas');
    // The worlds are rich enough to exercise every kind of decision.
    for (const [action, count] of Object.entries(seen)) assert.ok(count > 0, `some ${action} decisions`);
  });

  it("a reclaimer's borrowed replica may still be preempted by its victim's model with a higher claim", () => {
    // Found by the property above. m3's older replica uses GPUs, which its team's guarantee of 0 GPUs
    // leaves borrowed; its reclaim takes m0's only replica, and m0 (floor) then preempts that one (demand).
    const p0 = profile('p0', gpus(1, { cores: 16 }), { priority: 2 });
    const p1 = profile('p1', cores(13));
    const small = profile('p0', cores(4));
    const start = world({
      scopes: [org('o1'), team('o1t0', 'o1'), team('o1t1', 'o1'), project('o1t1p0', 'o1t1')],
      quotas: [quota('team:o1t1', gpus(0)), quota('project:o1t1p0', gpus(1, { cores: 35 }))],
      nodes: [node('n0', gpus(8, { cores: 16 }), { gpu_model: 'A' }), node('n1', gpus(4, { cores: 16 }))],
      models: [
        model('m0', [small], { owner: 'team:o1t0', min_replicas: 1 }),
        model('m3', [p0, p1], { owner: 'project:o1t1p0', target_tokens_per_sec: 3000 }),
      ],
      measurements: [measured('m3', 'p0', 5, 53), measured('m3', 'p1', 8, 496)],
      replicas: [
        replica('m3-old', { model: 'm3', profile: p0, node: 'n0' }),
        replica('m0-only', { model: 'm0', profile: small, node: 'n1' }),
      ],
    });
    const { decisions } = run(
      {
        start,
        events: [
          { kind: 'decide', model: 1, passes: 1 },
          { kind: 'decide', model: 0, passes: 1 },
        ],
      },
      () => {},
    );
    assert.deepEqual(
      decisions.map(({ decision: d }) => [d.model, d.action, d.victims?.map((v) => v.replica)]),
      [
        ['m3', 'reclaim', ['m0-only']],
        ['m0', 'preempt', ['m3-old']],
      ],
    );
  });

  it('sibling projects under a team that alone has a guarantee never reclaim from each other', () => {
    // One org whose single team has the only guarantee, on GPUs; every profile uses GPUs.
    const family = fc
      .integer({ min: 2, max: 3 })
      .map((n) => [
        org('o0', 'Org0'),
        team('o0t0', 'o0', 't0'),
        ...Array.from({ length: n }, (_, p) => project(`o0t0p${p}`, 'o0t0', `p${p}`)),
        org('o1', 'Guest'),
      ]);
    fc.assert(
      fc.property(
        scenario({ gpusOnly: true, churn: false, trees: family }).chain((sc) =>
          fc.integer({ min: 1, max: 16 }).map((g) => ({
            ...sc,
            start: { ...sc.start, quotas: [{ scope: 'team:o0t0' as const, guarantee: { gpus: g } }] },
          })),
        ),
        (sc) => {
          run(sc, (before, d, after) => {
            if (d.action !== 'reclaim') return;
            // Every replica uses the one guaranteed dimension here, so nothing at all is taken back.
            assert.deepEqual(takenBack(after, d), [], `${d.model}'s victims reclaim back`);
            const inTeam = (model: string) =>
              chainOf(before, before.models.find((m) => m.name === model)!.owner).includes('team:o0t0');
            if (!inTeam(d.model)) return;
            for (const v of d.victims!)
              assert.ok(!inTeam(v.model), `${d.model} took ${v.replica} of sibling ${v.model}`);
          });
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });

  it('a replica placed by a reclaim is never reclaimed back, nor preempted from outside its guarantee, while quotas and owners stay', () => {
    fc.assert(
      fc.property(scenario({ gpusOnly: false, churn: false }), (sc) => {
        const reservedFor = new Map<string, ScopeKey>();
        run(sc, (before, d, after) => {
          for (const v of d.victims ?? []) {
            const scope = reservedFor.get(v.replica);
            if (scope === undefined) continue;
            assert.equal(d.action, 'preempt', `${v.replica} was reclaimed back`);
            // Within the scope whose guarantee protects it, a higher claim may still take it (fair share).
            const chain = chainOf(before, before.models.find((m) => m.name === d.model)!.owner);
            assert.ok(chain.includes(scope), `${v.replica} was preempted for ${d.model}, outside ${scope}`);
          }
          if (d.action === 'reclaim') reservedFor.set(after.replicas.at(-1)!.id, d.reclaim_for!);
        });
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
