/** The gauges of the state, read from the store at scrape time. `resource` is gpus, cores or memory_gib. */
export const STATE_GAUGES = {
  llmgw_quota_guarantee: {
    help: 'Guarantee of a scope that has a quota, on each dimension it sets.',
    labelNames: ['scope', 'name', 'resource'],
  },
  llmgw_quota_limit: {
    help: 'Limit of a scope that has a quota, on each dimension it sets.',
    labelNames: ['scope', 'name', 'resource'],
  },
  llmgw_quota_holds: {
    help: 'What the active replicas owned by a scope (with a quota) or beneath it hold.',
    labelNames: ['scope', 'name', 'resource'],
  },
  llmgw_quota_borrowed: {
    help: 'What a scope (with a quota) holds beyond every guarantee: what could be reclaimed from it.',
    labelNames: ['scope', 'name', 'resource'],
  },
  llmgw_model_replicas: {
    help: 'Active replicas of a model by profile and state (pending, starting, ready, draining).',
    labelNames: ['model', 'profile', 'state'],
  },
  llmgw_model_in_flight: {
    help: 'Requests in flight (running + waiting) for a model from its latest load reports; absent when unknown.',
    labelNames: ['model'],
  },
  llmgw_model_capacity_at_slo: {
    help: "In-flight requests a model's pending, starting and ready replicas serve within their SLO.",
    labelNames: ['model'],
  },
  llmgw_model_pending: {
    help: "1 when a model's newest decision left it pending, by reason (no_room, limit, max_replicas, backoff, unmeasured, slo_unmet, preempted, yields, no_profile, other).",
    labelNames: ['model', 'reason'],
  },
  llmgw_model_blocked_by_limit: {
    help: "1 when a pending model's next replica is stopped by the limit of a scope on its owner's chain, on that resource.",
    labelNames: ['model', 'scope', 'name', 'resource'],
  },
  llmgw_cluster_capacity: {
    help: 'Capacity of the ready nodes.',
    labelNames: ['resource'],
  },
  llmgw_node_overcommitted: {
    help: 'Whether what runs on a node (starting, ready and draining replicas) exceeds its capacity on some dimension: 1 or 0.',
    labelNames: ['node'],
  },
  llmgw_node_state: {
    help: "1 for a node's current state (ready, cordoned, down, lost), 0 for its others; driver is sim or agent.",
    labelNames: ['node', 'driver', 'state'],
  },
  llmgw_node_heartbeat_age_seconds: {
    help: "Seconds since an agent's node last heard from its agent; absent for sim nodes and agents never heard from.",
    labelNames: ['node'],
  },
  llmgw_cluster_guaranteed: {
    help: 'What the guarantees promise in all, a guarantee nested in another counted once.',
    labelNames: ['resource'],
  },
} as const satisfies Record<string, { help: string; labelNames: readonly string[] }>;

export type StateGauge = keyof typeof STATE_GAUGES;
export interface Sample {
  labels: Record<string, string>;
  value: number;
}
export type StateFigures = Record<StateGauge, Sample[]>;
