import type { ClusterNode, Replica, ReplicaState } from './cluster.ts';
import type { Decision } from './decision.ts';
import type { GrowthMemory } from './growth.ts';
import type { Load, Measurement, Model } from './model.ts';
import type { Quota } from './quota.ts';
import type { Scope } from './scope.ts';

/** Tunables of the decisions; env names in ARCHITECTURE.md. */
export interface PolicySettings {
  /** How long `L <= 0.7 (C - c(r))` must hold before a replica is taken back (LLMGW_SCALE_DOWN_WINDOW_S). */
  scaleDownWindowMs: number;
  /** Load reports older than this count as unknown (LLMGW_LOAD_STALE_S), and are deleted. */
  loadStaleMs: number;
  /** The most sources a model's fresh load reports may come from (LLMGW_LOAD_SOURCES_MAX). */
  loadSourcesMax: number;
  /** Concurrency of a profile that is neither measured nor declares one. */
  defaultConcurrency: number;
  /**
   * A model's start delay until one of its replicas has been seen to become ready (policy/load-growth.ts):
   * the time within which a burst must be met by replicas that already run (LLMGW_START_DELAY_S).
   */
  startDelayMs: number;
  /** How long a burst a model showed keeps spare room for it, decaying to none (LLMGW_BURST_MEMORY_S). */
  burstMemoryMs: number;
}

export const DEFAULT_POLICY_SETTINGS: PolicySettings = {
  scaleDownWindowMs: 120_000,
  loadStaleMs: 60_000,
  loadSourcesMax: 64,
  defaultConcurrency: 8,
  startDelayMs: 60_000,
  burstMemoryMs: 3_600_000,
};

/**
 * Everything a decision looks at, read at one moment. Decisions are pure functions of it
 * (plus the model's own memory), the way Kueue decides on its cache snapshot.
 */
export interface Snapshot {
  /** Milliseconds since the epoch: the policy has no clock of its own. */
  now: number;
  scopes: Scope[];
  quotas: Quota[];
  models: Model[];
  measurements: Measurement[];
  nodes: ClusterNode[];
  /** All replicas, including stopped and failed ones (they hold nothing). */
  replicas: Replica[];
  /** Latest load of each model, by model name; absent = never reported. */
  load: Record<string, Load>;
  /**
   * The recent start outcomes (START_OUTCOMES_WINDOW_MS) of every model that failed a start or crashed
   * in that window: model -> outcomes, as the store read them. The policy derives which profiles are
   * backed off from them (policy/backoff.ts backedOffOf). A model's own pass reads its own afresh
   * (ModelMemory); this is what the others see of it: a sibling whose profiles are all backed off cannot
   * take room, so nobody yields it any. Absent: none failed.
   */
  startOutcomes?: Record<string, StartOutcome[]>;
  settings: PolicySettings;
}

/** How one replica of a profile fared: what the start backoff (policy/backoff.ts) is computed from. */
export interface StartOutcome {
  profile: string;
  state: ReplicaState;
  /** When the replica last changed state (ms since epoch). */
  at: number;
}

/**
 * How far back start outcomes are read: twice the backoff's cap (policy/backoff.ts BACKOFF_CAP_MS is
 * half of it), so every failure that can still back a profile off is read.
 */
export const START_OUTCOMES_WINDOW_MS = 600_000;

/** What one model's reconciler carries from pass to pass (kept in the workflow). */
export interface ModelMemory {
  /** Since when the scale-down condition has held without a break; null when it does not hold. */
  scaleDownSince: number | null;
  /** Profiles backed off after failed starts or crashes: profile name -> until when (ms since epoch). */
  backedOffUntil: Record<string, number>;
  /** The highest load seen since `scaleDownSince` (policy/load-growth.ts): what a fall is judged on. */
  scaleDownPeak?: number;
  /** The model's recent load growth and observed start delay (policy/load-growth.ts); absent: none seen. */
  growth?: GrowthMemory;
}

export const EMPTY_MEMORY: ModelMemory = { scaleDownSince: null, backedOffUntil: {} };

/**
 * The memory a reconciler carries to its next pass: the decision's (its scale-down window) over what it
 * had, with the profiles' backoff as the pass read it. The workflow and policy/pass.ts (the simulator's
 * pass) carry it with this one function.
 */
export function memoryAfter(
  memory: ModelMemory,
  decided: Decision['memory'],
  backedOffUntil: ModelMemory['backedOffUntil'],
): ModelMemory {
  return { ...memory, ...decided, backedOffUntil };
}
