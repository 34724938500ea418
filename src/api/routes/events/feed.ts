import type { ScopeKey } from '../../../domain/scope.ts';
import type { PolicySettings } from '../../../domain/snapshot.ts';
import type { LoadZone } from '../../../policy/load-zone.ts';
import {
  type DecisionChange,
  decisionsAfter,
  newestDecisionId,
  type ReplicaChange,
  replicaChangesAfter,
  storeNow,
} from '../../../store/changes.ts';
import type { Sql } from '../../../store/db.ts';
import { loadZones } from './load-zones.ts';
import { sentOnce } from './sent-once.ts';

/** How many looks at the decisions and replicas go to one look at the load zones. */
const ZONE_EVERY = 4;
/** How far back each look reads again, for changes whose transaction committed after later ones. */
const LATE_MS = 2000;

/** One change the stream sends, with the owner of its model so each stream filters by its caller's view. */
export type FeedChange =
  | { kind: 'decision'; owner: ScopeKey | null; change: DecisionChange }
  | { kind: 'replica'; owner: ScopeKey | null; change: ReplicaChange }
  | {
      kind: 'load';
      owner: ScopeKey | null;
      change: { model: string; zone: LoadZone; in_flight: number; capacity_at_slo: number };
    };

export interface ChangeFeed {
  /**
   * Calls `listener` with each batch of changes after the moment it resolves (the feed knows then
   * where the store stands), until the function it resolves to is called.
   */
  subscribe(listener: (changes: FeedChange[]) => void): Promise<() => void>;
}

/**
 * One look at the store every `intervalMs` for the whole process, and only while a stream listens:
 * new decisions, replicas whose state changed, and models whose load zone changed. Reading the
 * tables (not this process's own writes) lets every API process see what any worker recorded.
 */
export function changeFeed(
  sql: Sql,
  settings: PolicySettings,
  now: () => number,
  log: Pick<Console, 'warn'>,
  intervalMs = 250,
): ChangeFeed {
  const listeners = new Set<(changes: FeedChange[]) => void>();
  let timer: NodeJS.Timeout | undefined;
  let cursor: Promise<Awaited<ReturnType<typeof start>>> | undefined;
  let looks = 0;
  // Where the store stood when the first stream began: nothing at or before it is sent, and the zones
  // then are what later ones are compared with.
  const start = async () => {
    const floor = { decision: await newestDecisionId(sql), replica: await storeNow(sql) };
    const zones = new Map((await loadZones(sql, now(), settings)).map((z) => [z.model, z.zone]));
    return { ...floor, floor, fresh: sentOnce(), zones };
  };

  const poll = async () => {
    if (!cursor) return;
    // Kept as a constant: a stream that stops meanwhile clears the shared cursor, not this look's.
    const at = await cursor;
    // Zones need the whole snapshot: weighed every ZONE_EVERY looks (a second), not on each.
    const [decisions, replicas, zones] = await Promise.all([
      decisionsAfter(sql, { after: at.decision, lateMs: LATE_MS, floor: at.floor.decision }),
      replicaChangesAfter(sql, { after: at.replica, lateMs: LATE_MS, floor: at.floor.replica }),
      looks++ % ZONE_EVERY === 0 ? loadZones(sql, now(), settings) : [],
    ]);
    const changes: FeedChange[] = [];
    for (const change of decisions) {
      if (at.fresh(`decision ${change.id}`)) changes.push({ kind: 'decision', owner: change.owner, change });
    }
    for (const change of replicas) {
      if (at.fresh(`replica ${change.id} ${change.updated_at}`))
        changes.push({ kind: 'replica', owner: change.owner, change });
    }
    for (const { owner, ...zone } of zones) {
      if (at.zones.get(zone.model) !== zone.zone) changes.push({ kind: 'load', owner, change: zone });
      at.zones.set(zone.model, zone.zone);
    }
    // The newest read, which a look-back never moves behind.
    at.decision = Math.max(at.decision, decisions.at(-1)?.id ?? 0);
    at.replica = replicas.at(-1)?.updated_at ?? at.replica;
    if (changes.length > 0) for (const listener of listeners) listener(changes);
  };

  // Each look starts after the one before has ended, so a slow store never piles up looks.
  const schedule = () => {
    timer = setTimeout(async () => {
      await poll().catch((error) => log.warn(`events: reading the store failed: ${String(error)}`));
      if (listeners.size > 0) schedule();
      else timer = undefined;
    }, intervalMs);
    // The streams' sockets keep a process up while they are open; the looks on their own do not.
    timer.unref();
  };

  return {
    async subscribe(listener) {
      listeners.add(listener);
      cursor ??= start();
      // A stream that began before this one shares its cursor; one that failed to start is tried again.
      await cursor.catch((error) => {
        cursor = undefined;
        listeners.delete(listener);
        throw error;
      });
      if (!timer) schedule();
      return () => {
        listeners.delete(listener);
        // Started again from now when a stream next listens: no one needs what passed unheard.
        if (listeners.size === 0) cursor = undefined;
      };
    },
  };
}
