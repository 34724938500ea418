import { InvalidInput } from '../domain/errors.ts';
import type { Preemption, Quota } from '../domain/quota.ts';
import type { Resources } from '../domain/resources.ts';
import type { ScopeKey } from '../domain/scope.ts';
import { type Db, transaction } from './db.ts';
import { lockScope } from './tenancy.ts';

export interface StoredQuota extends Quota {
  updated_by: string;
  updated_at: string;
}

type QuotaRow = {
  scope: ScopeKey;
  guarantee: Resources | null;
  limit: Resources | null;
  preemption: Preemption | null;
  priority: number;
  updated_by: string;
  updated_at: Date;
};

const toQuota = (row: QuotaRow): StoredQuota => ({
  scope: row.scope,
  ...(row.guarantee ? { guarantee: row.guarantee } : {}),
  ...(row.limit ? { limit: row.limit } : {}),
  ...(row.preemption === 'never' ? { preemption: row.preemption } : {}),
  ...(row.priority === 0 ? {} : { priority: row.priority }),
  updated_by: row.updated_by,
  updated_at: row.updated_at.toISOString(),
});

export async function listQuotas(sql: Db): Promise<StoredQuota[]> {
  const rows = await sql<
    QuotaRow[]
  >`select scope, guarantee, "limit", preemption, priority, updated_by, updated_at from capacity_quotas order by scope`;
  return rows.map(toQuota);
}

export async function getQuota(sql: Db, scope: ScopeKey): Promise<StoredQuota | null> {
  const [row] = await sql<
    QuotaRow[]
  >`select scope, guarantee, "limit", preemption, priority, updated_by, updated_at from capacity_quotas where scope = ${scope}`;
  return row ? toQuota(row) : null;
}

/**
 * Replaces the scope's whole quota (one statement, so concurrent PUTs leave one of them whole). The
 * scope is locked meanwhile, so a quota is never left behind by a scope deleted at the same moment.
 * The default preemption ('lower-claim') is stored as null and the default priority as 0, so each reads
 * back absent however it was given.
 */
export async function putQuota(sql: Db, quota: Quota, updatedBy: string): Promise<void> {
  await transaction(sql, async (tx) => {
    if (!(await lockScope(tx, quota.scope))) throw new InvalidInput(`there is no ${quota.scope} any more`);
    const guarantee = quota.guarantee ? tx.json(quota.guarantee) : null;
    const limit = quota.limit ? tx.json(quota.limit) : null;
    const preemption = quota.preemption === 'never' ? quota.preemption : null;
    await tx`
      insert into capacity_quotas (scope, guarantee, "limit", preemption, priority, updated_by, updated_at)
      values (${quota.scope}, ${guarantee}, ${limit}, ${preemption}, ${quota.priority ?? 0}, ${updatedBy}, now())
      on conflict (scope) do update set guarantee = excluded.guarantee, "limit" = excluded."limit",
        preemption = excluded.preemption, priority = excluded.priority, updated_by = excluded.updated_by, updated_at = excluded.updated_at`;
  });
}

/** Removes the quota; false when the scope had none. */
export async function deleteQuota(sql: Db, scope: ScopeKey): Promise<boolean> {
  const rows = await sql`delete from capacity_quotas where scope = ${scope} returning scope`;
  return rows.length > 0;
}
