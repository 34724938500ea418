import { Counter, Gauge, Histogram, Registry } from 'prom-client';

/** What the gateway's instruments read at scrape time. */
export interface GatewayCounts {
  /** Models with requests in flight or held, and their counts. */
  inFlight(): Map<string, number>;
  held(): Map<string, number>;
  oldestHeldSeconds(): Map<string, number>;
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
  return {
    registry,
    requests: new Counter({
      name: 'llmgw_gateway_requests_total',
      help: 'Requests answered by this gateway, by model and HTTP status.',
      labelNames: ['model', 'status'] as const,
      registers,
    }),
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
