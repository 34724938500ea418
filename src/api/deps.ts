import type { ReplicaLogReader } from '../cluster/replica-logs.ts';
import type { ScopeCaps } from '../config.ts';
import type { PolicySettings } from '../domain/snapshot.ts';
import type { Reconcilers } from '../reconcilers/client.ts';
import type { Sql } from '../store/db.ts';

/** What the HTTP API works with; the app is built from these so tests can hand in their own. */
export interface ApiDeps {
  sql: Sql;
  reconcilers: Reconcilers;
  /** Resolves when Temporal answers; rejects (or false) when it does not. */
  temporalReachable: () => Promise<boolean>;
  /** llmgw's search attributes Temporal's namespace lacks: reconcilers cannot run without them (absent: not checked). */
  missingSearchAttributes?: () => Promise<string[]>;
  policy: PolicySettings;
  now?: () => number;
  /** How old the figures of GET /metrics and the reconcilers /readyz counts may be (default 5 s). */
  metricsRefreshMs?: number;
  /** The most models and scopes an operator may create within its scope (default DEFAULT_SCOPE_CAPS). */
  scopeCaps?: ScopeCaps;
  /** Reads a replica's engine log on its agent's node (absent: no node keeps one). */
  replicaLogs?: ReplicaLogReader;
  /** The Temporal UI's list of the namespace's workflows, which the console links each reconciler to. */
  temporalWorkflowsUrl?: string;
  /**
   * A node's credential for Temporal server, answered with each of its agent's heartbeats (absent: Temporal
   * authorizes nothing, so agents connect without one).
   */
  nodeCredential?: (node: string) => { credential: string; expires_at: string };
  /** A proxy in front terminates TLS: the console believes its X-Forwarded-Proto (LLMGW_TRUST_PROXY). */
  trustProxy?: boolean;
  /** Failed authentications a source address may make at once before 429s (LLMGW_AUTH_FAILURE_BURST). */
  authFailureBurst?: number;
}
