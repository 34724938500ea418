import type { PeerRule } from '../replica-count.ts';

/**
 * llm-d's workload variant autoscaler in saturation mode, with its defaults (docs/saturation-analyzer.md
 * and the capacity-scaling ConfigMap): kvCacheThreshold 0.80, queueLengthThreshold 5, kvSpareTrigger
 * 0.1, queueSpareTrigger 3, metrics as max_over_time[1m], one reconcile a minute.
 */
export const WVA_DEFAULTS = {
  loopMs: 60_000,
  windowMs: 60_000,
  kvCacheThreshold: 0.8,
  queueLengthThreshold: 5,
  kvSpareTrigger: 0.1,
  queueSpareTrigger: 3,
};

/**
 * Each loop, on each ready replica's peak KV-cache usage and queue over the last minute (here, requests
 * spread evenly: KV usage = running / (ready * concurrency at SLO), a replica at its measured
 * concurrency filling its cache): scale up by one from the ready count when no replica is unsaturated
 * or the mean spare KV (queue) is below its trigger, never while a replica is not ready yet; scale down
 * by one when the load spread over one replica fewer still leaves both spares at their triggers.
 */
export function llmdWva(config = WVA_DEFAULTS): () => PeerRule {
  return () => {
    const samples: { at: number; kv: number; queue: number }[] = [];
    let lastLoop = Number.NEGATIVE_INFINITY;
    return (seen) => {
      if (seen.ready > 0) {
        samples.push({
          at: seen.now,
          kv: Math.min(1, seen.running / (seen.ready * seen.concurrency)),
          queue: seen.waiting / seen.ready,
        });
      }
      while (samples.length > 0 && seen.now - samples[0].at >= config.windowMs) samples.shift();
      if (seen.now - lastLoop < config.loopMs || samples.length === 0) return seen.replicas;
      lastLoop = seen.now;
      const kv = Math.max(...samples.map((s) => s.kv));
      const queue = Math.max(...samples.map((s) => s.queue));
      const saturated = kv >= config.kvCacheThreshold || queue >= config.queueLengthThreshold;
      const spareKv = config.kvCacheThreshold - kv;
      const spareQueue = config.queueLengthThreshold - queue;
      if (saturated || spareKv < config.kvSpareTrigger || spareQueue < config.queueSpareTrigger) {
        return seen.ready < seen.replicas ? seen.replicas : seen.ready + 1;
      }
      const n = seen.ready;
      if (n >= 2) {
        const kvAfter = (kv * n) / (n - 1);
        const queueAfter = (queue * n) / (n - 1);
        const safe =
          config.kvCacheThreshold - kvAfter >= config.kvSpareTrigger &&
          config.queueLengthThreshold - queueAfter >= config.queueSpareTrigger;
        if (safe) return n - 1;
      }
      return seen.replicas;
    };
  };
}
