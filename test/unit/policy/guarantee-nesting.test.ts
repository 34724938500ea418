// Issue 19, item 1, as a property: whatever an operator of team Acme/ml does that the permission
// table and the grant rule accept (projects, their quotas, moving models within its subtree), what the
// guarantees of its subtree protect never exceeds its own team's guarantee.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { type Identity, may, mayOverrun } from '../../../src/contracts/permissions.ts';
import type { Quota } from '../../../src/domain/quota.ts';
import { DIMENSIONS, type Resources } from '../../../src/domain/resources.ts';
import type { Scope, ScopeKey } from '../../../src/domain/scope.ts';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { protection } from '../../../src/policy/guarantee.ts';
import { overrunBudget, overrunSentence } from '../../../src/policy/guarantee-grants.ts';
import { sum } from '../../../src/policy/resources.ts';
import { buildView } from '../../../src/policy/view.ts';
import { model, node, org, profile, project, quota, replica, team, world } from './fixtures.ts';

const OPERATOR: Identity = { name: 'opA', role: 'operator', scope: 'team:ml', models: null };
const MODELS = ['m0', 'm1', 'm2', 'm3'];

type Action =
  | { kind: 'project'; name: string }
  | { kind: 'quota'; scope: number; guarantee: Resources; limit?: Resources }
  | { kind: 'owner'; model: number; scope: number };

const resources = fc.record(
  { gpus: fc.nat({ max: 2000 }), cores: fc.nat({ max: 500 }) },
  { requiredKeys: [] },
) as fc.Arbitrary<Resources>;
const action: fc.Arbitrary<Action> = fc.oneof(
  fc.constantFrom('a', 'b', 'c', 'grab').map((name) => ({ kind: 'project' as const, name })),
  fc.record({ kind: fc.constant('quota' as const), scope: fc.nat(), guarantee: resources }),
  fc.record({ kind: fc.constant('owner' as const), model: fc.nat(), scope: fc.nat() }),
);

const start = fc.record({
  guarantee: fc.record({ gpus: fc.nat({ max: 16 }), cores: fc.nat({ max: 64 }) }, { requiredKeys: ['gpus'] }),
  orgGuarantee: fc.option(fc.record({ gpus: fc.nat({ max: 32 }) }), { nil: undefined }),
  replicas: fc.array(
    fc.record({
      model: fc.nat({ max: 3 }),
      gpus: fc.integer({ min: 0, max: 4 }),
      cores: fc.nat({ max: 16 }),
    }),
    { maxLength: 12 },
  ),
});

/** The resources of the replicas a guarantee of a scope in the operator's subtree protects. */
function protectedBeneath(s: Snapshot, subtree: Set<ScopeKey>): Resources {
  const view = buildView(s);
  const by = protection(view);
  return sum(
    view.active.filter((r) => subtree.has(by.get(r.id) ?? ('' as ScopeKey))).map((r) => r.resources),
  );
}

function subtreeOf(scopes: readonly Scope[], root: ScopeKey): Set<ScopeKey> {
  const inside = new Set<ScopeKey>([root]);
  for (const s of scopes) if (s.parent && inside.has(s.parent)) inside.add(s.key);
  return inside;
}

/** Applies the action as the API would: only when the role table and the grant rule accept it. */
function act(s: Snapshot, a: Action): Snapshot {
  const mine = [...subtreeOf(s.scopes, 'team:ml')];
  if (a.kind === 'project') {
    if (s.scopes.some((x) => x.key === `project:${a.name}`)) return s;
    return { ...s, scopes: [...s.scopes, project(a.name, 'ml')] };
  }
  const view = buildView(s);
  if (a.kind === 'owner') {
    const name = MODELS[a.model % MODELS.length];
    const owner = mine[a.scope % mine.length];
    return { ...s, models: s.models.map((m) => (m.name === name ? { ...m, owner } : m)) };
  }
  const target = s.scopes[a.scope % s.scopes.length].key;
  if (!may(OPERATOR, 'change-quota', { chain: view.chain(target) }).allowed) return s;
  const next: Quota = { scope: target, guarantee: a.guarantee };
  const budget = overrunBudget(view, next);
  if (!mayOverrun(OPERATOR, budget && overrunSentence(next, budget, String)).allowed) return s;
  return { ...s, quotas: [...s.quotas.filter((q) => q.scope !== target), next] };
}

describe('guarantees nest (POLICY.md "Guarantees nest")', () => {
  it('no operator action raises what its subtree protects above its scope’s guarantee', () => {
    let accepted = 0;
    fc.assert(
      fc.property(start, fc.array(action, { maxLength: 25 }), (init, actions) => {
        const x = profile('x', {});
        let s: Snapshot = world({
          scopes: [org('acme'), team('ml', 'acme'), team('web', 'acme')],
          quotas: [
            quota('team:ml', init.guarantee),
            ...(init.orgGuarantee ? [quota('org:acme', init.orgGuarantee)] : []),
          ],
          models: MODELS.map((name) => model(name, [x], { owner: 'team:ml' })),
          nodes: [node('n', { gpus: 1000, cores: 1000 })],
          replicas: init.replicas.map((r, i) =>
            replica(`r${i}`, {
              model: MODELS[r.model],
              profile: { ...x, resources: { gpus: r.gpus, cores: r.cores } },
              node: 'n',
            }),
          ),
        });
        for (const a of actions) {
          const after = act(s, a);
          if (after !== s) accepted++;
          s = after;
          const shielded = protectedBeneath(s, subtreeOf(s.scopes, 'team:ml'));
          const guarantee = init.guarantee as Resources;
          for (const d of DIMENSIONS) {
            if (guarantee[d] === undefined) continue;
            assert.ok(
              (shielded[d] ?? 0) <= guarantee[d]!,
              `after ${JSON.stringify(a)}: the subtree protects ${shielded[d]} ${d} > guarantee ${guarantee[d]}`,
            );
          }
          // The grants the operator could make stay within what the team has to give.
          const granted = sum(
            s.quotas.filter((q) => q.scope.startsWith('project:')).map((q) => q.guarantee ?? {}),
          );
          for (const d of DIMENSIONS) {
            assert.ok(
              (granted[d] ?? 0) <= (guarantee[d] ?? 0),
              `grants ${JSON.stringify(granted)} fit the team`,
            );
          }
        }
      }),
      { numRuns: 500 },
    );
    assert.ok(accepted > 100, `operators' actions were accepted (${accepted})`);
  });
});
