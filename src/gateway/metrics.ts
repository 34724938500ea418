import {
  Counter,
  type CounterConfiguration,
  Gauge,
  Histogram,
  type LabelValues,
  Registry,
} from 'prom-client';

/** What the gateway's instruments read at scrape time. */
export interface GatewayCounts {
  /** Models with requests in flight or held, and their counts. */
  inFlight(): Map<string, number>;
  held(): Map<string, number>;
  oldestHeldSeconds(): Map<string, number>;
  /** Every replica the gateway knows: its requests in flight from this gateway, and whether it is ejected. */
  replicas(): { model: string; replica: string; inFlight: number; ejected?: string }[];
}

/**
 * A counter every forwarded request adds to, by two labels: tallied in maps of plain numbers and added to
 * prom-client's counter when it is read. prom-client's own `inc` builds a label object and a label
 * string and looks that up for each call: some percent of a worker's CPU at thousands of requests a
 * second. A series shows from its first count on, as with `inc`.
 */
export class TalliedCounter<First extends string, Second extends string> {
  private readonly tallies = new Map<string, Map<string | number, number>>();

  constructor(
    config: Omit<CounterConfiguration<First | Second>, 'labelNames' | 'collect'>,
    first: First,
    second: Second,
  ) {
    const { tallies } = this;
    // Kept by the registries in `config.registers` (prom-client's default without): a scrape reads it there.
    new Counter({
      ...config,
      labelNames: [first, second],
      collect() {
        for (const [a, bySecond] of tallies) {
          for (const [b, count] of bySecond)
            this.inc({ [first]: a, [second]: b } as LabelValues<First | Second>, count);
        }
        tallies.clear();
      },
    });
  }

  inc(first: string, second: string | number) {
    let bySecond = this.tallies.get(first);
    if (!bySecond) {
      bySecond = new Map();
      this.tallies.set(first, bySecond);
    }
    bySecond.set(second, (bySecond.get(second) ?? 0) + 1);
  }
}

/**
 * The gateway's instruments, per model (`model` is "" for requests refused before their model was
 * known, so that made-up names cannot grow the series).
 */
export function createGatewayMetrics(counts: GatewayCounts, registry = new Registry()) {
  const registers = [registry];
  const perModel = (gauge: Gauge<'model'>, figures: Map<string, number>) => {
    gauge.reset();
    for (const [model, value] of figures) gauge.set({ model }, value);
  };
  new Gauge({
    name: 'llmgw_gateway_in_flight',
    help: 'Requests this gateway has sent to a replica and not finished, by model.',
    labelNames: ['model'] as const,
    registers,
    collect() {
      perModel(this, counts.inFlight());
    },
  });
  new Gauge({
    name: 'llmgw_gateway_queued',
    help: 'Requests this gateway holds for a model with no ready replica (scaling from zero) or for a free slot on one, by model.',
    labelNames: ['model'] as const,
    registers,
    collect() {
      perModel(this, counts.held());
    },
  });
  new Gauge({
    name: 'llmgw_gateway_oldest_queued_seconds',
    help: 'How long the longest-held request of each model has waited for a ready replica; absent when none waits.',
    labelNames: ['model'] as const,
    registers,
    collect() {
      perModel(this, counts.oldestHeldSeconds());
    },
  });
  new Gauge({
    name: 'llmgw_gateway_replica_in_flight',
    help: 'Requests this gateway has sent to each replica and not finished.',
    labelNames: ['model', 'replica'] as const,
    registers,
    collect() {
      this.reset();
      for (const { model, replica, inFlight } of counts.replicas()) this.set({ model, replica }, inFlight);
    },
  });
  new Gauge({
    name: 'llmgw_gateway_replica_healthy',
    help: 'Whether this gateway routes to each replica (1), or has ejected it (0, with the reason in llmgw_gateway_replica_ejected).',
    labelNames: ['model', 'replica'] as const,
    registers,
    collect() {
      this.reset();
      for (const { model, replica, ejected } of counts.replicas())
        this.set({ model, replica }, ejected ? 0 : 1);
    },
  });
  new Gauge({
    name: 'llmgw_gateway_replica_ejected',
    help: 'Replicas this gateway has ejected now, by reason (errors, first_byte_timeout, health_check, latency).',
    labelNames: ['model', 'replica', 'reason'] as const,
    registers,
    collect() {
      this.reset();
      for (const { model, replica, ejected } of counts.replicas()) {
        if (ejected) this.set({ model, replica, reason: ejected }, 1);
      }
    },
  });
  return {
    registry,
    replicaRequests: new TalliedCounter(
      {
        name: 'llmgw_gateway_replica_requests_total',
        help: 'Requests this gateway sent to each replica (each attempt), by model and replica.',
        registers,
      },
      'model',
      'replica',
    ),
    replicaErrors: new Counter({
      name: 'llmgw_gateway_replica_errors_total',
      help: 'Failures on each replica, by kind: connection (refused, reset), first_byte_timeout, request_timeout, status_5xx, mid_answer.',
      labelNames: ['model', 'replica', 'kind'] as const,
      registers,
    }),
    ejections: new Counter({
      name: 'llmgw_gateway_replica_ejections_total',
      help: 'Times this gateway ejected each replica, by reason (errors, first_byte_timeout, health_check, latency).',
      labelNames: ['model', 'replica', 'reason'] as const,
      registers,
    }),
    selections: new TalliedCounter(
      {
        name: 'llmgw_gateway_selections_total',
        help: 'Replicas chosen for requests, by model and why: prefix (the replica most likely holding the prompt prefix), least_in_flight (no useful prefix match), balanced (the prefix holder was over its share of the load), retry.',
        registers,
      },
      'model',
      'reason',
    ),
    requests: new TalliedCounter(
      {
        name: 'llmgw_gateway_requests_total',
        help: 'Requests answered by this gateway, by model and HTTP status.',
        registers,
      },
      'model',
      'status',
    ),
    errors: new Counter({
      name: 'llmgw_gateway_errors_total',
      help: 'Requests that failed, by model and kind (no_key, forbidden, unknown_model, queue_full, no_replica, upstream_failed, upstream_status, ...).',
      labelNames: ['model', 'kind'] as const,
      registers,
    }),
    staleRetries: new Counter({
      name: 'llmgw_gateway_stale_connection_retries_total',
      help: 'Requests sent again on a new connection because their pooled one had been closed by the replica before it answered, by model.',
      labelNames: ['model'] as const,
      registers,
    }),
    ttftSeconds: new Histogram({
      name: 'llmgw_gateway_ttft_seconds',
      help: "Time from a request's arrival to the first bytes of its replica's answer (queueing included), by model.",
      labelNames: ['model'] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
      registers,
    }),
    requestSeconds: new Histogram({
      name: 'llmgw_gateway_request_seconds',
      help: "Time from a request's arrival to the end of its answer, by model.",
      labelNames: ['model'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
      registers,
    }),
  };
}

export type GatewayMetrics = ReturnType<typeof createGatewayMetrics>;
