import type { Tx } from './db.ts';

/**
 * Every advisory lock llmgw takes, in one place so that no two share a key. Any constants work; they
 * only have to be the same for every llmgw process. Keyed locks use the two-key form (first key, hash).
 */
export const LOCKS = {
  migrations: 7_311_001,
  reservations: 7_311_002,
  quotaChanges: 7_311_003,
  /** Per model: its load sources are counted one report at a time. */
  loadSources: 7_311_004,
  /** Per scope: what an operator creates within it is counted one creation at a time. */
  scopeCreations: 7_311_005,
  /** Held for as long as a worker runs the simulated cluster (a session lock: store/lease.ts). */
  simCluster: 7_311_006,
  /** Per model name: a change checks what is stored and writes it in one step (api/recorded.ts). */
  modelChanges: 7_311_007,
} as const;

/** Holds `lock` (for `key`, when given) until the transaction ends. */
export async function lockUntilCommit(tx: Tx, lock: keyof typeof LOCKS, key?: string): Promise<void> {
  if (key === undefined) await tx`select pg_advisory_xact_lock(${LOCKS[lock]})`;
  else await tx`select pg_advisory_xact_lock(${LOCKS[lock]}, hashtext(${key}))`;
}
