import type { PeerRule } from '../replica-count.ts';

/**
 * Ray Serve's default autoscaling config (ray.serve.config.AutoscalingConfig, Ray 2.x docs,
 * "Advanced autoscaling"): target_ongoing_requests 2, metrics_interval_s 10, look_back_period_s 30,
 * upscale_delay_s 30, downscale_delay_s 600, smoothing_factor 1.0. The controller's 0.1 s loop runs
 * here once per tick.
 */
export const RAY_SERVE_DEFAULTS = {
  targetOngoingRequests: 2,
  metricsIntervalMs: 10_000,
  lookBackMs: 30_000,
  upscaleDelayMs: 30_000,
  downscaleDelayMs: 600_000,
  smoothing: 1,
};

/**
 * desired = ceil(current * (1 + smoothing * (ongoing / (target * current) - 1))), ongoing being the
 * mean of the replicas' reports (running plus queued) over the look-back; applied once it has asked
 * for more (fewer) without a break for the upscale (downscale) delay.
 */
export function rayServe(config = RAY_SERVE_DEFAULTS): () => PeerRule {
  return () => {
    const reports: { at: number; ongoing: number }[] = [];
    let lastReport = Number.NEGATIVE_INFINITY;
    let upSince: number | null = null;
    let downSince: number | null = null;
    return (seen) => {
      if (seen.now - lastReport >= config.metricsIntervalMs) {
        reports.push({ at: seen.now, ongoing: seen.running + seen.waiting });
        lastReport = seen.now;
      }
      while (reports.length > 0 && seen.now - reports[0].at > config.lookBackMs) reports.shift();
      const ongoing = reports.reduce((total, r) => total + r.ongoing, 0) / reports.length;
      const current = Math.max(seen.replicas, 1);
      const ratio = ongoing / (config.targetOngoingRequests * current);
      const desired = Math.ceil(current * (1 + config.smoothing * (ratio - 1)));
      if (desired > seen.replicas) {
        downSince = null;
        upSince ??= seen.now;
        if (seen.now - upSince >= config.upscaleDelayMs) {
          upSince = null;
          return desired;
        }
      } else if (desired < seen.replicas) {
        upSince = null;
        downSince ??= seen.now;
        if (seen.now - downSince >= config.downscaleDelayMs) {
          downSince = null;
          return desired;
        }
      } else {
        upSince = null;
        downSince = null;
      }
      return seen.replicas;
    };
  };
}
