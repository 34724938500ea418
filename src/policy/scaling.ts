import type { Model } from '../domain/model.ts';
import { inFlight, replicas } from './explain.ts';
import type { LoadReading } from './load.ts';
import type { ModelFigures } from './model-figures.ts';
import { formatNumber } from './resources.ts';

/** Why the model needs one more replica, and whether only a measured profile can help. */
export interface UpTrigger {
  why: string;
  /** Only the target throughput asks for it: an unmeasured profile would add no known throughput. */
  measuredOnly: boolean;
}

/**
 * The first reason to add a replica (POLICY.md "Scaling a model"), or null:
 * 1. fewer than min_replicas, whatever the load;
 * 2. known load above the capacity at SLO (from zero replicas any load);
 * 3. measured throughput below the target throughput.
 * Unknown load never asks for a replica; max_replicas is checked by the caller.
 */
export function upTrigger(model: Model, figures: ModelFigures, load: LoadReading): UpTrigger | null {
  const n = figures.serving.length;
  if (n < model.min_replicas) {
    return { why: `scale up: ${replicas(n)} < min_replicas ${model.min_replicas}`, measuredOnly: false };
  }
  if (load.inFlight !== null && load.inFlight > figures.capacity) {
    const why =
      n === 0
        ? `scale up: ${inFlight(load.inFlight)} and no replica`
        : `scale up: ${inFlight(load.inFlight)} > ${formatNumber(figures.capacity)} at SLO on ${replicas(n)}`;
    return { why, measuredOnly: false };
  }
  const target = model.target_tokens_per_sec;
  if (target !== undefined && figures.tokensPerSec < target) {
    const why = `scale up: ${formatNumber(figures.tokensPerSec)} tokens/s < target ${formatNumber(target)} tokens/s on ${replicas(n)}`;
    return { why, measuredOnly: true };
  }
  return null;
}
