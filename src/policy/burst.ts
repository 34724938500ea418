import { type Decision, RESERVING_ACTIONS, type Victim } from '../domain/decision.ts';
import type { ModelMemory, Snapshot } from '../domain/snapshot.ts';
import { decideModel } from './decide.ts';
import { hasBursts } from './load-growth.ts';
import { reservationRefusal } from './reservation.ts';
import { buildView, type View } from './view.ts';

/**
 * The most replicas one pass places. A burst is reserved in one transaction under the reservation
 * lock, and each step plans on a view of its own: a bound keeps that lock short. The reconciler looks
 * again at once after a burst that reached it, so a larger need is met in a few passes.
 */
export const MAX_BURST = 32;

/**
 * Whether the reconciler looks again at once after reserving these decisions: after a reclaim or a
 * preemption, and after a burst at its bound. A smaller burst placed all that its view asked for, and
 * what could ask for more wakes the reconciler anyway: its replicas becoming ready or failing, a change
 * of load, spec or quota. Without that second pass a placement costs two passes, not three.
 */
export function looksAgainAfter(reserved: readonly Decision[]): boolean {
  return reserved[0]?.action !== 'place' || reserved.length >= MAX_BURST;
}

/**
 * The snapshot once a replica of the profile is reserved on `node` and the victims have stopped (the
 * replica is pending, as a reservation leaves it).
 */
export function placedIn(
  snapshot: Snapshot,
  decision: Pick<Decision, 'model' | 'profile' | 'resources' | 'node'>,
  victims: readonly Victim[] = [],
): Snapshot {
  const gone = new Set(victims.map((v) => v.replica));
  const replicas = snapshot.replicas.map((r) => (gone.has(r.id) ? { ...r, state: 'stopped' as const } : r));
  replicas.push({
    id: `${decision.model}-planned-${replicas.length}`,
    model: decision.model,
    profile: decision.profile!,
    node: decision.node!,
    resources: decision.resources!,
    state: 'pending',
    created_at: snapshot.now,
  });
  return { ...snapshot, replicas };
}

/**
 * One pass's decisions (POLICY.md "Scaling a model", bursts): the model's decision, and when it places,
 * the places that follow it on the view with the earlier ones reserved, while the model still asks for
 * a replica and one fits — up to the limit, max_replicas and the room, as HPA jumps to the count it
 * needs. A reclaim or preemption stays alone: its victims drain first. At most `most` decisions.
 */
export function decideBurst(
  view: View,
  modelName: string,
  memory: ModelMemory,
  most = MAX_BURST,
): Decision[] {
  const burst = [decideModel(view, modelName, memory)];
  if (burst[0].action === 'remove')
    return [...burst, ...moreRemovals(view, modelName, memory, burst[0], most)];
  let sim = view;
  while (burst.length < most && burst.at(-1)!.action === 'place') {
    sim = buildView(placedIn(sim.snapshot, burst.at(-1)!));
    const next = decideModel(sim, modelName, memory);
    if (next.action !== 'place') break;
    burst.push(next);
  }
  return burst;
}

/**
 * Why a burst may not be reserved on the view under the lock, or null: each decision is re-checked
 * (policy/reservation.ts) on the view with the ones before it reserved. Only the first may be other
 * than a place.
 */
export function burstRefusal(view: View, burst: readonly Decision[]): string | null {
  let sim = view;
  for (const [i, decision] of burst.entries()) {
    if (i > 0 && decision.action !== 'place') return `a ${decision.action} cannot follow a place in one pass`;
    if (!RESERVING_ACTIONS.includes(decision.action)) return `a ${decision.action} decision reserves nothing`;
    const why = reservationRefusal(sim, decision);
    if (why) return why;
    if (i < burst.length - 1) sim = buildView(placedIn(sim.snapshot, decision));
  }
  return null;
}

/**
 * The replicas a bursty model sheds after the first in the same pass (docs/policy.md "Headroom for
 * bursts"): on the view with the ones before draining, each that the window's peak, the kept headroom,
 * min_replicas and the target still let go; of those (the first included) half, rounded up. A model
 * that showed no burst sheds one a window.
 */
export function moreRemovals(
  view: View,
  modelName: string,
  memory: ModelMemory,
  first: Decision,
  most = MAX_BURST,
): Decision[] {
  if (!hasBursts(first.memory.growth)) return [];
  const removed: Decision[] = [];
  let sim = view;
  let last = first;
  while (removed.length + 1 < most) {
    const gone = last.replica!;
    const replicas = sim.snapshot.replicas.map((r) =>
      r.id === gone ? { ...r, state: 'draining' as const } : r,
    );
    sim = buildView({ ...sim.snapshot, replicas });
    const next = decideModel(sim, modelName, memory);
    if (next.action !== 'remove') break;
    removed.push(next);
    last = next;
  }
  // Half of what could go (the first included), at least one: each window halves the distance to the
  // level the window's peak asks for, so a fall misread costs at most half of the room.
  return removed.slice(0, Math.ceil((removed.length + 1) / 2) - 1);
}
