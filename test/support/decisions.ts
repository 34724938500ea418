import type { Decision } from '../../src/domain/decision.ts';

/** A decision of `model` with nothing to do, changed by `fields`. */
export function decision(model: string, fields: Partial<Decision> = {}): Decision {
  return {
    model,
    action: 'none',
    reason: 'nothing to do',
    rejected: [],
    inputs: {
      in_flight: 0,
      capacity_at_slo: 0,
      replicas: 0,
      min_replicas: 0,
      max_replicas: 2,
      tokens_per_sec: 0,
      quotas: [],
    },
    memory: { scaleDownSince: null },
    ...fields,
  };
}
