import type { Measurement } from '../domain/model.ts';
import type { PolicySettings, Snapshot } from '../domain/snapshot.ts';
import type { Db, Sql } from './db.ts';
import { readLoad } from './load.ts';
import { listMeasurements } from './measurements.ts';
import { listModels } from './models.ts';
import { listNodes } from './nodes.ts';
import { listQuotas } from './quotas.ts';
import {
  type ActiveReplicas,
  activeReplicasAfter,
  readActiveReplicas,
  recentStartOutcomes,
} from './replicas.ts';
import { listScopes } from './tenancy.ts';

/** The quota policy: what changes rarely and workers may cache (ARCHITECTURE.md "Freshness"). */
export type QuotaPolicy = Pick<Snapshot, 'scopes' | 'quotas' | 'measurements'>;
/** What changes all the time and every pass reads afresh. */
export type LiveState = Pick<Snapshot, 'models' | 'nodes' | 'replicas' | 'load' | 'startOutcomes'>;

export async function readQuotaPolicy(sql: Db): Promise<QuotaPolicy> {
  const [scopes, quotas, measurements] = await Promise.all([
    listScopes(sql),
    listQuotas(sql),
    listMeasurements(sql),
  ]);
  return { scopes, quotas, measurements };
}

/**
 * The live state as a worker read it, and what lets the worker's next reading, and a reservation under
 * its lock (snapshotOnReading), bring it up to date: the models' epoch before they were read, the
 * active replicas with their watermark and last seq.
 */
export interface LiveReading {
  state: LiveState;
  modelsEpoch: number;
  replicas: ActiveReplicas;
}

/**
 * The live state as a worker reads it, with the models' epoch read first: any change after it moves it
 * on. Given the worker's previous reading, its models are kept while their epoch has not moved, and only
 * the replica rows written since are read, so that the reads of a fan-out do not parse every model,
 * profile and replica again (nodes and load are read whole: one row per node, per model and source).
 */
export async function readLiveReading(
  sql: Sql,
  now: number,
  settings: PolicySettings,
  previous?: LiveReading,
): Promise<LiveReading> {
  const modelsEpoch = await readModelsEpoch(sql);
  const models = previous?.modelsEpoch === modelsEpoch ? previous.state.models : undefined;
  return { ...(await readLive(sql, now, settings, models, previous?.replicas)), modelsEpoch };
}

/**
 * Stopped, failed and lost replicas are left out: they hold nothing. `models`, when given, are still
 * current; `replicas`, when given, are brought up to date rather than read whole.
 */
async function readLive(
  sql: Sql,
  now: number,
  settings: PolicySettings,
  current?: LiveState['models'],
  previous?: ActiveReplicas,
) {
  const [models, nodes, replicas, load, startOutcomes] = await Promise.all([
    current ?? listModels(sql),
    listNodes(sql),
    readActiveReplicas(sql, previous),
    readLoad(sql, now, settings.loadStaleMs),
    recentStartOutcomes(sql),
  ]);
  return { state: { models, nodes, replicas: [...replicas.byId.values()], load, startOutcomes }, replicas };
}

/**
 * What a burst of places is checked against under the reservation lock (placement/reserve.ts), from a
 * reading the worker took before it: scopes, quotas and nodes read now (few rows); the models as read
 * then, unless a model or profile changed since (their epoch moved); the replicas read then and every
 * one reserved since (each is inserted under the lock). What else may have changed since only frees room
 * (replicas stop; a stopped one never holds room again), so a check on it errs toward refusing. Load,
 * measurements and the recent start outcomes (the others' backoff) are the worker's, as its plans had
 * them.
 */
export async function snapshotOnReading(
  tx: Db,
  earlier: { reading: LiveReading; measurements: Measurement[] },
  now: number,
  settings: PolicySettings,
): Promise<Snapshot> {
  const { reading, measurements } = earlier;
  const [scopes, quotas, nodes, epoch, reserved] = await Promise.all([
    listScopes(tx),
    listQuotas(tx),
    listNodes(tx),
    readModelsEpoch(tx),
    activeReplicasAfter(tx, reading.replicas.lastSeq),
  ]);
  const models = epoch === reading.modelsEpoch ? reading.state.models : await listModels(tx);
  const replicas = [...reading.state.replicas, ...reserved.replicas];
  const { load, startOutcomes } = reading.state;
  return { now, settings, scopes, quotas, measurements, models, nodes, replicas, load, startOutcomes };
}

/**
 * Whether a snapshot brought up to date under the lock (snapshotOnReading) holds what `before`, built
 * on the same reading and measurements, held: the same models (their epoch did not move), no replica
 * reserved since (they are only added), and the same scopes, quotas and nodes as read now. Then the two
 * differ in their time alone.
 */
export function unchangedSince(before: Snapshot, after: Snapshot): boolean {
  const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);
  return (
    after.models === before.models &&
    after.measurements === before.measurements &&
    after.load === before.load &&
    after.startOutcomes === before.startOutcomes &&
    after.settings === before.settings &&
    after.replicas.length === before.replicas.length &&
    same(after.nodes, before.nodes) &&
    same(after.scopes, before.scopes) &&
    same(after.quotas, before.quotas)
  );
}

async function readModelsEpoch(sql: Db): Promise<number> {
  const [row] = await sql<{ epoch: string }[]>`select epoch from store_epochs where name = 'models'`;
  return Number(row.epoch);
}

/** Everything a decision looks at, read now. */
export async function readSnapshot(sql: Sql, now: number, settings: PolicySettings): Promise<Snapshot> {
  const [policy, live] = await Promise.all([readQuotaPolicy(sql), readLive(sql, now, settings)]);
  return { now, settings, ...policy, ...live.state };
}
