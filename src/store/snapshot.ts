import type { PolicySettings, Snapshot } from '../domain/snapshot.ts';
import type { Db, Sql } from './db.ts';
import { readLoad } from './load.ts';
import { listMeasurements } from './measurements.ts';
import { listModels } from './models.ts';
import { listNodes } from './nodes.ts';
import { listQuotas } from './quotas.ts';
import { listReplicas } from './replicas.ts';
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

/** Stopped and failed replicas are left out: they hold nothing. */
export async function readLiveState(sql: Sql, now: number, settings: PolicySettings): Promise<LiveState> {
  const [models, nodes, replicas, load] = await Promise.all([
    listModels(sql),
    listNodes(sql),
    listReplicas(sql, { activeOnly: true }),
    readLoad(sql, now, settings.loadStaleMs),
  ]);
  return { models, nodes, replicas, load };
}

/** Everything a decision looks at, read now. */
export async function readSnapshot(sql: Sql, now: number, settings: PolicySettings): Promise<Snapshot> {
  const [policy, live] = await Promise.all([readQuotaPolicy(sql), readLiveState(sql, now, settings)]);
  return { now, settings, ...policy, ...live };
}
