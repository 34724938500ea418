import type { Replica } from '../domain/cluster.ts';
import type { BurstHeadroom, GrowthMemory, RisingBurst } from '../domain/growth.ts';

export type { BurstHeadroom, RisingBurst };

import type { Dimension, Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import type { PolicySettings } from '../domain/snapshot.ts';
import { isBorrowed } from './guarantee.ts';
import { holdsOf } from './holdings.ts';
import { type LoadReading, loadOf } from './load.ts';
import { modelFigures } from './model-figures.ts';
import { reclaimingScope } from './reclaim.ts';
import type { View } from './view.ts';

/**
 * What a model's reconciler learns from its own load (docs/policy.md "Headroom for bursts"): how much
 * the load grew within one start delay, and how long its replicas take to become ready. Each pass
 * observes the load it planned on; nothing here is tuned to a trace: the only figures are the model's
 * own start delay and the span of the memory (settings.burstMemoryMs).
 */

/** Bounds that keep the memory small in the workflow's state, whatever the load does. */
const MAX_LOWS = 32;
const MAX_RISES = 16;
const MAX_SETTLING = 64;

export const EMPTY_GROWTH: GrowthMemory = { lows: [], rises: [], settling: {} };

/** The model's start delay: the last observed time to ready, else the configured one. */
export const startDelayOf = (growth: GrowthMemory | undefined, settings: PolicySettings): number =>
  growth?.readyMs ?? settings.startDelayMs;

/**
 * The memory after a pass that saw `seen` (the load, known or not) and the model's replicas at `now`:
 * - a replica seen settling before and ready now was ready within `now - created_at`: its time to ready;
 * - the load's rise within one start delay (the load now less the lowest seen within it), when above 0,
 *   is remembered with the load it reached, for the memory's span; rises that a later one at least as
 *   large in both growth and top outdoes are forgotten (they would never decide anything again).
 */
export function observeLoad(
  growth: GrowthMemory | undefined,
  now: number,
  seen: LoadReading,
  replicas: readonly Replica[],
  settings: PolicySettings,
): GrowthMemory {
  const before = growth ?? EMPTY_GROWTH;
  let readyMs = before.readyMs;
  const settling: Record<string, number> = {};
  for (const replica of replicas) {
    if (replica.state === 'ready' && replica.id in before.settling) {
      readyMs = Math.max(0, now - before.settling[replica.id]);
    } else if (
      (replica.state === 'pending' || replica.state === 'starting') &&
      Object.keys(settling).length < MAX_SETTLING
    ) {
      settling[replica.id] = replica.created_at;
    }
  }
  const delay = readyMs ?? settings.startDelayMs;
  const span = settings.burstMemoryMs;
  let rises = before.rises.filter((r) => now - r.at < span);
  let lows = before.lows.filter(([at]) => now - at <= delay);
  // Requests that still wait after waiting at the last pass are a queue piling up behind replicas that
  // are not ready yet: the same burst, waiting, not load that grew. Learned as a rise, they would keep
  // room for the queue long after it is served. A queue that began after that pass (the last one emptied
  // between the passes) is a new burst; when the sources do not say when it began, it is taken as the same.
  const waiting = seen.waiting ?? 0;
  const piling =
    waiting > 0 &&
    before.queuedAt !== undefined &&
    (seen.waitingSince === undefined || seen.waitingSince <= before.queuedAt);
  const load = piling ? null : seen.inFlight;
  if (load !== null) {
    const lowest = Math.min(load, ...lows.map(([, value]) => value));
    const grew = load - lowest;
    if (grew > 0) {
      const rise = { at: now, growth: grew, top: load, withinMs: delay };
      rises = [...rises.filter((r) => r.growth > grew || r.top > load), rise];
      if (rises.length > MAX_RISES) {
        const weakest = rises.reduce((a, b) => (decayed(a, now, span) <= decayed(b, now, span) ? a : b));
        rises = rises.filter((r) => r !== weakest);
      }
    }
    // Only loads lower than every later one can be the lowest of a later window.
    lows = [...lows.filter(([, value]) => value < load), [now, load]];
    if (lows.length > MAX_LOWS) lows = [lows[0], ...lows.slice(lows.length - MAX_LOWS + 1)];
  }
  return {
    lows,
    rises,
    settling,
    ...(readyMs !== undefined && { readyMs }),
    ...(waiting > 0 && { queuedAt: now }),
  };
}

/** A rise's weight at `now`: whole when seen, none once the memory's span has passed (linear between). */
const decayed = (rise: GrowthMemory['rises'][number], now: number, span: number) =>
  rise.growth * Math.max(0, 1 - (now - rise.at) / span);

/**
 * Room to keep beyond the load L for the bursts the model showed: the largest remembered rise, weighted
 * by how recent it is (whole when seen, none after the memory's span), but never above what the load
 * reached then less L (the load has not been seen higher); null when there is none to keep.
 */
export function burstHeadroom(
  growth: GrowthMemory | undefined,
  now: number,
  load: number,
  settings: PolicySettings,
): BurstHeadroom | null {
  let best: BurstHeadroom | null = null;
  for (const rise of growth?.rises ?? []) {
    const weight = Math.max(0, 1 - (now - rise.at) / settings.burstMemoryMs);
    const spare = Math.floor(Math.min(rise.growth * weight, rise.top * weight - load));
    if (spare > 0 && (!best || spare > best.spare)) {
      best = {
        code: 'burst_headroom',
        spare,
        growth: rise.growth,
        within_ms: rise.withinMs,
        ago_ms: now - rise.at,
      };
    }
  }
  return best;
}

/** Whether the model showed any rise in the memory's span: it scales down as a bursty model does. */
export const hasBursts = (growth: GrowthMemory | undefined): boolean => (growth?.rises.length ?? 0) > 0;

/** "code grew by 40 in flight within 60 s 12 min ago" */
export const burstPhrase = (model: string, headroom: BurstHeadroom): string =>
  `${model} grew by ${headroom.growth} in flight within ${Math.round(headroom.within_ms / 1000)} s ` +
  ago(headroom.ago_ms);

/** "kept 3 spare: code grew by 40 in flight within 60 s 12 min ago" (room for N more, without a count) */
export function headroomSentence(model: string, headroom: BurstHeadroom, spareReplicas?: number): string {
  const kept = spareReplicas === undefined ? `room for ${headroom.spare} more` : `${spareReplicas} spare`;
  return `kept ${kept}: ${burstPhrase(model, headroom)}`;
}

const ago = (ms: number) =>
  ms < 60_000 ? `${Math.round(ms / 1000)} s ago` : `${Math.round(ms / 60_000)} min ago`;

/**
 * Whether the replica may be kept as spare room: a protected one always; a borrowed one only while no
 * scope off the owner's chain holds less than its guarantee. Room a guarantee keeps for another scope
 * is lent to serve load, not to wait for a burst: a spare replica there would only be reclaimed, and the
 * scope that is owed it would wait for the drain.
 */
export function mayKeepAsSpare(view: View, owner: ScopeKey | null, replica: Replica): boolean {
  if (waitingElsewhere(view, replica.model)) return false;
  return !isBorrowed(view, replica.id) || !owedElsewhere(view, owner);
}

/**
 * Whether a spare replica of these resources may be placed: within a guarantee on the owner's chain
 * (it would be protected), or, borrowed, while no scope off the chain holds less than its guarantee
 * (the same reason as mayKeepAsSpare).
 */
export const mayPlaceSpare = (
  view: View,
  model: string,
  owner: ScopeKey | null,
  resources: Resources,
): boolean =>
  !waitingElsewhere(view, model) &&
  (reclaimingScope(view, owner, resources) !== null || !owedElsewhere(view, owner));

/**
 * Whether another model's known load exceeds its capacity at SLO while it may still add a replica: it
 * waits for room, and spare room for a burst that may come is not kept or taken meanwhile.
 */
export const waitingElsewhere = (view: View, model: string): boolean =>
  [...view.models.values()].some((other) => {
    if (other.name === model) return false;
    const load = loadOf(view, other.name).inFlight;
    if (load === null) return false;
    const figures = modelFigures(view, other);
    return load > figures.capacity && figures.serving.length < other.max_replicas;
  });

/** Some scope off the owner's chain holds less than its guarantee on a dimension it sets. */
function owedElsewhere(view: View, owner: ScopeKey | null): boolean {
  const chain = new Set<string>(view.chain(owner));
  for (const [scope, quota] of view.quotas) {
    if (chain.has(scope) || !quota.guarantee) continue;
    const holds = holdsOf(view, scope);
    const dims = Object.keys(quota.guarantee) as Dimension[];
    if (dims.some((d) => (holds[d] ?? 0) < (quota.guarantee![d] ?? 0))) return true;
  }
  return false;
}

/**
 * A burst outrunning the model (docs/policy.md "Headroom for bursts"): the load rose at this pass, and
 * exceeds what its ready replicas serve, so the replicas started for it will be late; a load that grew
 * by g within one start delay may grow by g again before any replica placed now is ready. So the model
 * asks for room for L + g while `capacity` (pending, starting and ready) is below it. null otherwise:
 * a model whose ready replicas keep up with its load (a steady one) never buys spare room.
 */
export function risingBurst(
  growth: GrowthMemory,
  now: number,
  load: number,
  capacity: number,
  ready: number,
): RisingBurst | null {
  const last = growth.rises.at(-1);
  if (!last || last.at !== now || load <= ready || capacity >= load + last.growth) return null;
  return { code: 'rising_burst', growth: last.growth, within_ms: last.withinMs, ready };
}

/** "a burst outruns the ready replicas: 40 in flight > 16 ready at SLO, grew by 30 within 60 s" */
export const risingSentence = (load: number, burst: RisingBurst): string =>
  `scale up for a burst: ${load} in flight > ${burst.ready} ready at SLO, grew by ${burst.growth} within ` +
  `${Math.round(burst.within_ms / 1000)} s; room for as much again`;
