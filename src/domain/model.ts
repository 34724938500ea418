import type { Resources } from './resources.ts';
import type { ParamValue } from './runtime.ts';
import type { ScopeKey } from './scope.ts';

export type EngineKind = 'vllm' | 'sglang' | 'llama.cpp' | 'sim' | 'command';

export interface Profile {
  name: string;
  /** Higher is tried first. */
  priority: number;
  resources: Resources;
  gpu_model?: string;
  /** In-flight requests one replica serves until the profile is measured. */
  default_concurrency?: number;
  /** An inline engine: an admin's only (runtimes are how operators choose what runs). */
  engine?: { kind: EngineKind } & Record<string, unknown>;
  /** The admin-defined runtime that runs it (src/domain/runtime.ts), and the parameters given to it. */
  runtime?: string;
  params?: Record<string, ParamValue>;
}

/** A replica serves requests only through an engine (a runtime's or inline): one of a profile without any has no endpoint. */
export const servesRequests = (profile: Profile): boolean =>
  profile.engine !== undefined || profile.runtime !== undefined;

export interface Model {
  name: string;
  owner: ScopeKey | null;
  /**
   * The model's priority among models competing for one limit or node (POLICY.md "Priority and fair
   * sharing among models"); absent means 0. Not a profile's priority.
   */
  priority?: number;
  min_replicas: number;
  max_replicas: number;
  target_tokens_per_sec?: number;
  profiles: Profile[];
  /** Set while the model's replicas drain before it is removed. */
  deleting?: boolean;
}

export interface Measurement {
  model: string;
  profile: string;
  max_concurrency_at_slo: number;
  throughput_tok_per_sec: number;
  slo: { ttft_p95_ms?: number; tpot_p95_ms?: number };
  points?: { concurrency: number; ttft_p95_ms: number; tpot_p95_ms: number; tok_per_sec: number }[];
  tool?: string;
  measured_at: string;
}

/** The most requests in flight (and, apart, waiting) one report may give, and a model's sum may reach. */
export const MAX_REPORTED_REQUESTS = 10_000_000;

/** Requests in flight for a model, summed over the latest report of each source. */
export interface Load {
  in_flight: number;
  waiting: number;
  /**
   * Since when requests have waited without a break (ms since epoch), when some wait and the source
   * knows: a queue that began after the reconciler last saw one is a new burst, not the same one piling up.
   */
  waiting_since?: number;
  /** When the newest report that counts was made (ms since epoch). */
  reported_at: number;
}
