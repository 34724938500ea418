// The oracle of the policy's property tests: holds, protection and room recomputed the plain way (per
// scope, per node), independently of src/policy.
import assert from 'node:assert/strict';
import { ACTIVE_STATES, type ClusterNode, type Replica } from '../../../src/domain/cluster.ts';
import type { Profile } from '../../../src/domain/model.ts';
import type { Resources } from '../../../src/domain/resources.ts';
import type { ScopeKey } from '../../../src/domain/scope.ts';
import type { Snapshot } from '../../../src/domain/snapshot.ts';
import { add, fitsWithin, sum, usesAnyOf } from '../../../src/policy/resources.ts';

export const isActive = (r: Replica) => ACTIVE_STATES.includes(r.state);
export const ownerOf = (s: Snapshot, r: Replica) => s.models.find((m) => m.name === r.model)?.owner ?? null;

export function chainOf(s: Snapshot, key: ScopeKey | null): ScopeKey[] {
  const chain: ScopeKey[] = [];
  for (
    let scope = s.scopes.find((x) => x.key === key);
    scope;
    scope = s.scopes.find((x) => x.key === scope!.parent)
  ) {
    chain.push(scope.key);
  }
  return chain;
}
export const under = (s: Snapshot, r: Replica, scope: ScopeKey) => chainOf(s, ownerOf(s, r)).includes(scope);
/**
 * What `r` counts toward the scope: all of it, except a pending replica whose victims (draining, reclaimed
 * for it) the scope counts as well (`taken`: those it counts), which counts only what they do not cover.
 */
export function countedAt(
  s: Snapshot,
  r: Replica,
  scope: ScopeKey,
  taken = (_v: Replica) => true,
): Resources {
  if (r.state !== 'pending') return r.resources;
  const victims = s.replicas.filter(
    (v) => v.state === 'draining' && v.reclaimed_for === r.id && under(s, v, scope) && taken(v),
  );
  const covered = sum(victims.map((v) => v.resources));
  const out: Resources = {};
  for (const d of ['gpus', 'cores', 'memory_gib'] as const) {
    if (r.resources[d] !== undefined) out[d] = Math.max(0, r.resources[d]! - (covered[d] ?? 0));
  }
  return out;
}
export const holds = (s: Snapshot, scope: ScopeKey) =>
  sum(s.replicas.filter((r) => isActive(r) && under(s, r, scope)).map((r) => countedAt(s, r, scope)));

/**
 * Replica IDs that fit the guarantee of some scope on their owner's chain. Each scope walks its replicas
 * alone, ancestors before descendants, and takes only what every ancestor whose guarantee the replica
 * draws on took too (guarantees nest).
 */
export function protectedIds(s: Snapshot): Set<string> {
  return new Set([...guaranteeTakes(s).values()].flatMap((ids) => [...ids]));
}

/** Each scope with a guarantee, and the replica IDs its guarantee takes. */
export function guaranteeTakes(s: Snapshot): Map<ScopeKey, Set<string>> {
  const takenBy = new Map<ScopeKey, Set<string>>();
  const guaranteeOf = (key: ScopeKey) => s.quotas.find((q) => q.scope === key)?.guarantee;
  const depth = (key: ScopeKey) => chainOf(s, key).length;
  for (const q of [...s.quotas].sort((a, b) => depth(a.scope) - depth(b.scope))) {
    if (!q.guarantee) continue;
    const ancestors = chainOf(s, q.scope).slice(1);
    const mine = s.replicas
      .filter((r) => isActive(r) && under(s, r, q.scope))
      .sort((a, b) => a.created_at - b.created_at || (a.id < b.id ? -1 : 1));
    const taken = new Set<string>();
    let held: Resources = {};
    for (const r of mine) {
      const ancestorsTook = ancestors.every((a) => {
        const above = guaranteeOf(a);
        return !above || !usesAnyOf(r.resources, above) || takenBy.get(a)?.has(r.id);
      });
      const counted = countedAt(s, r, q.scope, (v) => taken.has(v.id));
      if (
        ancestorsTook &&
        usesAnyOf(r.resources, q.guarantee) &&
        fitsWithin(add(held, counted), q.guarantee)
      ) {
        held = add(held, counted);
        taken.add(r.id);
      }
    }
    takenBy.set(q.scope, taken);
  }
  return takenBy;
}

export const onNode = (s: Snapshot, name: string, which: (r: Replica) => boolean) =>
  sum(s.replicas.filter((r) => r.node === name && which(r)).map((r) => r.resources));
export const full = (n: ClusterNode): Resources => ({ gpus: 0, cores: 0, memory_gib: 0, ...n.capacity });
export const hostable = (n: ClusterNode | undefined, p: Profile | undefined) =>
  !!n && !!p && n.state === 'ready' && (!p.gpu_model || p.gpu_model === n.gpu_model);

/**
 * No node is overcommitted: what its pending (reservations included), starting and ready replicas hold
 * stays within its capacity. Draining replicas still hold their room until stopped, which placement
 * respects (checked per decision); only their reclaimer's reservation may stand next to them meanwhile.
 */
export function checkNodes(s: Snapshot) {
  for (const n of s.nodes) {
    const committed = onNode(s, n.name, (r) => isActive(r) && r.state !== 'draining');
    assert.ok(fitsWithin(committed, full(n)), `${n.name} is not overcommitted`);
  }
}
