import type { Measurement } from '../domain/model.ts';
import type { PolicySettings, Snapshot } from '../domain/snapshot.ts';
import type { Db, Sql } from './db.ts';
import { readLoad } from './load.ts';
import { listMeasurements } from './measurements.ts';
import { listModels } from './models.ts';
import { listNodes } from './nodes.ts';
import { listQuotas } from './quotas.ts';
import { activeReplicasAfter } from './replicas.ts';
import { listScopes } from './tenancy.ts';

/** The quota policy: what changes rarely and workers may cache (ARCHITECTURE.md "Freshness"). */
export type QuotaPolicy = Pick<Snapshot, 'scopes' | 'quotas' | 'measurements'>;
/** What changes all the time and every pass reads afresh. */
export type LiveState = Pick<Snapshot, 'models' | 'nodes' | 'replicas' | 'load'>;

export async function readQuotaPolicy(sql: Db): Promise<QuotaPolicy> {
  const [scopes, quotas, measurements] = await Promise.all([
    listScopes(sql),
    listQuotas(sql),
    listMeasurements(sql),
  ]);
  return { scopes, quotas, measurements };
}

/**
 * The live state as a worker read it, and what lets a reservation bring that reading up to date under
 * its lock (snapshotOnReading): the models' epoch before they were read, the last replica seq read.
 */
export interface LiveReading {
  state: LiveState;
  modelsEpoch: number;
  replicaSeq: number;
}

/**
 * The live state as a worker reads it, with the models' epoch read first: any change after it moves it
 * on. Given the worker's previous reading, its models are kept while their epoch has not moved, so that
 * the reads of a fan-out do not parse every model and profile again (only what changes all the time).
 */
export async function readLiveReading(
  sql: Sql,
  now: number,
  settings: PolicySettings,
  previous?: LiveReading,
): Promise<LiveReading> {
  const modelsEpoch = await readModelsEpoch(sql);
  const models = previous?.modelsEpoch === modelsEpoch ? previous.state.models : undefined;
  return { ...(await readLive(sql, now, settings, models)), modelsEpoch };
}

export async function readLiveState(sql: Sql, now: number, settings: PolicySettings): Promise<LiveState> {
  return (await readLive(sql, now, settings)).state;
}

/** Stopped and failed replicas are left out: they hold nothing. `models`, when given, are still current. */
async function readLive(sql: Sql, now: number, settings: PolicySettings, current?: LiveState['models']) {
  const [models, nodes, active, load] = await Promise.all([
    current ?? listModels(sql),
    listNodes(sql),
    activeReplicasAfter(sql),
    readLoad(sql, now, settings.loadStaleMs),
  ]);
  return { state: { models, nodes, replicas: active.replicas, load }, replicaSeq: active.lastSeq };
}

/**
 * What a burst of places is checked against under the reservation lock (store/reservations.ts), from a
 * reading the worker took before it: scopes, quotas and nodes read now (few rows); the models as read
 * then, unless a model or profile changed since (their epoch moved); the replicas read then and every
 * one reserved since (each is inserted under the lock). What else may have changed since only frees room
 * (replicas stop; a stopped one never holds room again), so a check on it errs toward refusing. Load and
 * measurements are the worker's, as its plans had them.
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
    activeReplicasAfter(tx, reading.replicaSeq),
  ]);
  const models = epoch === reading.modelsEpoch ? reading.state.models : await listModels(tx);
  const replicas = [...reading.state.replicas, ...reserved.replicas];
  return { now, settings, scopes, quotas, measurements, models, nodes, replicas, load: reading.state.load };
}

async function readModelsEpoch(sql: Db): Promise<number> {
  const [row] = await sql<{ epoch: string }[]>`select epoch from store_epochs where name = 'models'`;
  return Number(row.epoch);
}

/** Everything a decision looks at, read now. */
export async function readSnapshot(sql: Sql, now: number, settings: PolicySettings): Promise<Snapshot> {
  const [policy, live] = await Promise.all([readQuotaPolicy(sql), readLiveState(sql, now, settings)]);
  return { now, settings, ...policy, ...live };
}
