import type { PeerRule } from '../replica-count.ts';

/**
 * Kubernetes HPA (autoscaling/v2) on a concurrency metric served by KEDA, with their defaults:
 * kube-controller-manager --horizontal-pod-autoscaler-sync-period 15 s and tolerance 0.1; the
 * default behavior: scale-up stabilization 0 s with policies 100% or 4 pods per 15 s (selectPolicy
 * Max), scale-down stabilization 300 s. The metric's target (AverageValue per pod) is the measured
 * concurrency at SLO. KEDA's metrics server asks the scaler afresh at each of the HPA's requests (its
 * pollingInterval, 30 s, paces only the operator's 0-to-1 activation, and these models never go to
 * zero; cached values need `useCachedMetrics`, off by default: kedacore/keda#2282), so each sync sees
 * the load of that moment.
 */
export const HPA_KEDA_DEFAULTS = {
  syncMs: 15_000,
  tolerance: 0.1,
  scaleDownStabilizationMs: 300_000,
  scaleUpPercent: 100,
  scaleUpPods: 4,
};

/**
 * Each sync: recommendation = ceil(metric / target), unless metric / (target * current) is within the
 * tolerance of 1; scale down only to the highest recommendation of the stabilization window; scale up
 * at most to max(2 * current, current + 4).
 */
export function hpaKeda(config = HPA_KEDA_DEFAULTS): () => PeerRule {
  return () => {
    let lastSync = Number.NEGATIVE_INFINITY;
    const recommendations: { at: number; replicas: number }[] = [];
    return (seen) => {
      // It ran before the trace: its window holds the count it had been keeping, not an empty history.
      if (recommendations.length === 0) recommendations.push({ at: seen.now, replicas: seen.replicas });
      if (seen.now - lastSync < config.syncMs) return seen.replicas;
      lastSync = seen.now;
      const metric = seen.running + seen.waiting;
      const current = seen.replicas;
      const ratio = metric / (seen.concurrency * Math.max(current, 1));
      const recommended =
        Math.abs(ratio - 1) <= config.tolerance ? current : Math.ceil(metric / seen.concurrency);
      recommendations.push({ at: seen.now, replicas: recommended });
      while (seen.now - recommendations[0].at > config.scaleDownStabilizationMs) recommendations.shift();
      if (recommended > current) {
        const limit = Math.max(
          current + config.scaleUpPods,
          Math.ceil(current * (1 + config.scaleUpPercent / 100)),
        );
        return Math.min(recommended, limit);
      }
      return Math.min(current, Math.max(...recommendations.map((r) => r.replicas)));
    };
  };
}
