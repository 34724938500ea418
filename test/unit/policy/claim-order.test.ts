// How claims compare (docs/policy.md "Priority nests"): a table of named cases on the shared tree,
// then properties over random trees with random priorities.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { Claim } from '../../../src/domain/decision.ts';
import type { Model } from '../../../src/domain/model.ts';
import type { Quota } from '../../../src/domain/quota.ts';
import type { Scope, ScopeKey } from '../../../src/domain/scope.ts';
import { compareClaims, compareInOrder, type Ranked, ranked } from '../../../src/policy/claim-order.ts';
import { nextClaim } from '../../../src/policy/claims.ts';
import { buildView } from '../../../src/policy/view.ts';
import { model, org, project, SCOPES, team, world } from './fixtures.ts';

const floor = (k = 1, of = k): Claim => ({ priority: 0, tier: 'floor', k, of });
const demand = (k = 2): Claim => ({ priority: 0, tier: 'demand', k, of: 1 });
const surplus = (k = 3): Claim => ({ priority: 0, tier: 'surplus', k, of: 1 });

/**
 * The shared tree (org Acme > team ml > projects training and serving; org Beta > team web), with
 * these models: in team ml `hi` (priority 5) and `lo` (0), in team web `w` (0) and `big` (1,000,000:
 * the operator), in project training `t` (0), owned by org Acme `a` (0), and `free` without owner.
 */
const MODELS: Model[] = [
  model('hi', [], { owner: 'team:ml', priority: 5 }),
  model('lo', [], { owner: 'team:ml' }),
  model('w', [], { owner: 'team:web' }),
  model('t', [], { owner: 'project:training' }),
  model('a', [], { owner: 'org:acme' }),
  model('free', []),
];
/** The same without `hi`: where team ml has no model above the others, none of its claims is capped. */
const LEVEL = MODELS.filter((m) => m.name !== 'hi');
const viewWith = (quotas: Quota[] = [], models: Model[] = MODELS) =>
  buildView(world({ scopes: SCOPES, quotas, models }));
const rank = (view: ReturnType<typeof viewWith>, name: string, claim: Claim): Ranked =>
  ranked(view, view.models.get(name)!, claim);

type Want = 'stronger' | 'equal' | 'weaker';
const SIGN: Record<Want, number> = { stronger: 1, equal: 0, weaker: -1 };
/** -1, 0 or 1 (never -0, which strict equality tells apart from 0). */
const sign = (x: number) => (x > 0 ? 1 : x < 0 ? -1 : 0);

describe('compareClaims', () => {
  const cases: {
    name: string;
    quotas?: Quota[];
    models?: Model[];
    a: [string, Claim];
    b: [string, Claim];
    want: Want;
  }[] = [
    {
      name: 'within one owner a higher model priority wins over any tier',
      a: ['hi', surplus()],
      b: ['lo', floor()],
      want: 'stronger',
    },
    {
      name: 'replicas of one model: floor over demand',
      a: ['lo', floor()],
      b: ['lo', demand()],
      want: 'stronger',
    },
    { name: 'demand over surplus', a: ['lo', demand()], b: ['lo', surplus()], want: 'stronger' },
    {
      name: "a model priority does not count against another org's: tier decides",
      models: [...LEVEL, model('big', [], { owner: 'team:web', priority: 1_000_000 })],
      a: ['big', demand()],
      b: ['t', floor()],
      want: 'weaker',
    },
    {
      name: 'priority 1,000,000 and floor 1 against floor 1 of another org: equal, as at priority 0',
      models: [
        model('big', [], { owner: 'team:web', priority: 1_000_000 }),
        model('other', [], { owner: 'project:training' }),
      ],
      a: ['big', floor(1)],
      b: ['other', floor(1)],
      want: 'equal',
    },
    {
      name: "an org's priority (an admin's) orders orgs: its surplus over another's floor",
      quotas: [{ scope: 'org:acme', priority: 1 }],
      a: ['t', surplus()],
      b: ['w', floor()],
      want: 'stronger',
    },
    {
      name: "a project's priority (its team's operator's) orders it against the team's own models",
      quotas: [{ scope: 'project:training', priority: 6 }],
      a: ['t', surplus()],
      b: ['hi', floor()],
      want: 'stronger',
    },
    {
      name: "a team's model against a project of the team: the model's priority against the project's",
      quotas: [{ scope: 'project:training', priority: 1 }],
      models: [...MODELS.filter((m) => m.name !== 'hi'), model('hi', [], { owner: 'team:ml', priority: 2 })],
      a: ['hi', surplus()],
      b: ['t', floor()],
      want: 'stronger',
    },
    {
      name: 'a model without owner against an org: its priority against the org\u2019s',
      models: [...MODELS.filter((m) => m.name !== 'free'), model('free', [], { priority: 1 })],
      a: ['free', surplus()],
      b: ['a', floor()],
      want: 'stronger',
    },
    {
      name: 'equal strengths where the chains part: floor over demand across teams',
      models: LEVEL,
      a: ['w', floor()],
      b: ['t', demand()],
      want: 'stronger',
    },
    {
      name: "a model's 1st floor replica over another team's 2nd",
      models: LEVEL,
      a: ['w', floor(1, 2)],
      b: ['t', floor(2, 2)],
      want: 'stronger',
    },
    {
      name: 'demand replicas of two orgs are equal',
      models: LEVEL,
      a: ['w', demand(2)],
      b: ['t', demand(5)],
      want: 'equal',
    },
    {
      name: 'beneath a weaker sibling a claim stands as surplus: another team outranks its floor with demand',
      a: ['lo', floor()],
      b: ['w', demand()],
      want: 'weaker',
    },
    {
      name: 'the strongest sibling stands at its tier: its floor outranks another team\u2019s demand',
      a: ['hi', floor()],
      b: ['w', demand()],
      want: 'stronger',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const view = viewWith(c.quotas, c.models);
      const a = rank(view, c.a[0], c.a[1]);
      const b = rank(view, c.b[0], c.b[1]);
      const got = sign(compareClaims(a, b));
      assert.equal(got, SIGN[c.want]);
      assert.equal(sign(compareClaims(b, a)), -got || 0, 'the order is antisymmetric');
      if (got !== 0) assert.equal(sign(compareInOrder(a, b)), got, 'the sort order agrees');
    });
  }

  it('the ring of three does not close (the cycle POLICY.md read literally allows)', () => {
    // hi's surplus over lo's floor (one owner); web's demand over hi's surplus (tier). Read literally,
    // lo's floor would outrank web's demand, and the three would preempt each other in turn.
    const view = viewWith();
    const hiSurplus = rank(view, 'hi', surplus());
    const loFloor = rank(view, 'lo', floor());
    const webDemand = rank(view, 'w', demand());
    assert.ok(compareClaims(hiSurplus, loFloor) > 0);
    assert.ok(compareClaims(webDemand, hiSurplus) > 0);
    assert.ok(compareClaims(webDemand, loFloor) > 0, 'so web outranks lo too: no ring');
  });

  it('does not flap: a victim taken for another team cannot take the room back', () => {
    // web's model takes lo's floor replica (lo stands as surplus beneath hi); lo's replacement is its
    // next claim, floor 1 again, and the replica web placed is now its floor 1: still stronger.
    const view = viewWith();
    const lo = view.models.get('lo')!;
    const w = view.models.get('w')!;
    const webNew = ranked(view, w, nextClaim({ ...w, min_replicas: 1 }, 0));
    const victim = rank(view, 'lo', floor(1, 1));
    assert.ok(compareClaims(victim, webNew) < 0, 'the victim was strictly lower');
    const replacement = ranked(view, lo, nextClaim({ ...lo, min_replicas: 1 }, 0));
    const placed = rank(view, 'w', floor(1, 1));
    assert.ok(compareClaims(replacement, placed) < 0, 'its replacement is lower than what took the room');
  });
});

// ---- properties over random trees -------------------------------------------------------------------

const ORGS = ['o1', 'o2'];
const TEAMS: [string, string][] = [
  ['t1', 'o1'],
  ['t2', 'o1'],
  ['t3', 'o2'],
];
const TREE: Scope[] = [
  ...ORGS.map((id) => org(id)),
  ...TEAMS.map(([id, o]) => team(id, o)),
  project('p1', 't1'),
];
const OWNERS: (ScopeKey | null)[] = [
  null,
  'org:o1',
  'team:t1',
  'team:t2',
  'team:t3',
  'project:p1',
  'team:t1',
];
const PRIORITIES = [-1, 0, 0, 1, 2, 1_000_000];

const claimArb: fc.Arbitrary<Claim> = fc
  .record({
    tier: fc.constantFrom('floor' as const, 'demand' as const, 'surplus' as const),
    k: fc.integer({ min: 1, max: 3 }),
  })
  .map(({ tier, k }) => ({ priority: 0, tier, k, of: 3 }));

const worldArb = fc.record({
  quotas: fc.array(
    fc.record({
      scope: fc.constantFrom(...TREE.map((s) => s.key)),
      priority: fc.constantFrom(...PRIORITIES),
    }),
    {
      maxLength: 4,
    },
  ),
  models: fc.array(
    fc.record({ owner: fc.constantFrom(...OWNERS), priority: fc.constantFrom(...PRIORITIES) }),
    {
      minLength: 1,
      maxLength: 7,
    },
  ),
});

interface World {
  quotas: { scope: ScopeKey; priority: number }[];
  models: { owner: ScopeKey | null; priority: number }[];
}
const viewOfWorld = (w: World) => {
  const quotas = new Map(w.quotas.map((q) => [q.scope, q as Quota]));
  return buildView(
    world({
      scopes: TREE,
      quotas: [...quotas.values()],
      models: w.models.map((m, i) => model(`m${i}`, [], m)),
    }),
  );
};

/** Random claims of random models in one random world. */
const claimsArb = worldArb.chain((w) =>
  fc.array(fc.tuple(fc.nat(w.models.length - 1), claimArb), { minLength: 3, maxLength: 8 }).map((picked) => {
    const view = viewOfWorld(w);
    return { w, view, claims: picked.map(([i, claim]) => ranked(view, view.models.get(`m${i}`)!, claim)) };
  }),
);

describe('claim order over random trees', () => {
  it('the sort order is a total order that agrees with compareClaims, so claims never form a ring', () => {
    fc.assert(
      fc.property(claimsArb, ({ claims }) => {
        for (const a of claims) {
          assert.equal(compareInOrder(a, a), 0);
          for (const b of claims) {
            assert.equal(sign(compareInOrder(a, b)) + sign(compareInOrder(b, a)), 0, 'antisymmetric');
            assert.equal(sign(compareClaims(a, b)) + sign(compareClaims(b, a)), 0, 'antisymmetric');
            if (compareClaims(a, b) > 0) assert.ok(compareInOrder(a, b) > 0, 'agrees');
            for (const c of claims) {
              if (compareInOrder(a, b) >= 0 && compareInOrder(b, c) >= 0)
                assert.ok(compareInOrder(a, c) >= 0, 'transitive');
            }
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it("a team with no quota cannot outrank another org's replicas by its model priority", () => {
    // Whatever the priorities inside org o1 (its teams' and project's quotas, its models'), a claim
    // beneath it outranks one of org o2 no more than it would were they all 0.
    const insideO1: (ScopeKey | null)[] = ['org:o1', 'team:t1', 'team:t2', 'project:p1'];
    const nameOf = (r: Ranked) => r.keys.at(-1)!.slice('model:'.length);
    fc.assert(
      fc.property(claimsArb, ({ w, view, claims }) => {
        const flatView = viewOfWorld({
          quotas: w.quotas.filter((q) => q.scope === 'org:o1' || !insideO1.includes(q.scope as ScopeKey)),
          models: w.models.map((m) => (insideO1.includes(m.owner) ? { ...m, priority: 0 } : m)),
        });
        const flat = (r: Ranked) => ranked(flatView, flatView.models.get(nameOf(r))!, r.claim);
        for (const a of claims.filter((r) => r.keys[0] === 'org:o1')) {
          for (const b of claims.filter((r) => r.keys[0] === 'org:o2')) {
            assert.ok(
              sign(compareClaims(a, b)) <= sign(compareClaims(flat(a), flat(b))),
              `${nameOf(a)} outranks ${nameOf(b)} by a number written inside its org (${JSON.stringify(view.quotas.size)})`,
            );
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('scope priorities order siblings: every claim beneath the stronger one outranks every claim beneath the weaker', () => {
    fc.assert(
      fc.property(claimsArb, ({ claims }) => {
        for (const a of claims) {
          for (const b of claims) {
            const i = a.keys.findIndex((key, j) => key !== b.keys[j]);
            if (
              i < 0 ||
              i >= b.keys.length ||
              a.keys[i].startsWith('model:') ||
              b.keys[i].startsWith('model:')
            )
              continue;
            if (a.strengths[i] > b.strengths[i]) assert.ok(compareClaims(a, b) > 0);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});
