import type { Model } from '../../../src/domain/model.ts';
import { DEFAULT_POLICY_SETTINGS } from '../../../src/domain/snapshot.ts';
import type { TraceLoad } from '../../../src/simulate/experiment.ts';
import type { Scenario } from '../../../src/simulate/scenario.ts';
import type { ServedRequest } from '../../../src/simulate/serving-pool.ts';

export const FROM = Date.UTC(2026, 0, 1);
export const HOUR_MS = 3_600_000;

/** A model of 1-GPU H100 replicas that serve 8 requests each at SLO. */
export const gpuModel = (name: string, fields: Partial<Model> = {}): Model => ({
  name,
  owner: null,
  min_replicas: 1,
  max_replicas: 16,
  profiles: [{ name: 'h100', priority: 0, resources: { gpus: 1 }, gpu_model: 'H100' }],
  ...fields,
});

/** One node of 16 H100, the models given, start delay 60 s, drain grace 30 s, resync 30 s. */
export function scene(models: Model[] = [gpuModel('chat')], fields: Partial<Scenario> = {}): Scenario {
  return {
    name: 'test',
    nodes: [{ name: 'gpu-1', capacity: { gpus: 16 }, gpu_model: 'H100', labels: {}, state: 'ready' }],
    models,
    scopes: [],
    quotas: [],
    measurements: models.map((m) => ({
      model: m.name,
      profile: 'h100',
      max_concurrency_at_slo: 8,
      throughput_tok_per_sec: 200,
      slo: {},
      measured_at: '2026-01-01T00:00:00.000Z',
    })),
    prefillTokPerSec: new Map(models.map((m) => [`${m.name}/h100`, 4000])),
    traces: {},
    idleFirstMs: new Map(),
    startDelayMs: 60_000,
    drainGraceMs: 30_000,
    resyncMs: 30_000,
    settings: DEFAULT_POLICY_SETTINGS,
    ...fields,
  };
}

/** `n` requests that arrive at `at` and each hold a slot for `ms`. */
export const held = (n: number, at: number, ms: number): ServedRequest[] =>
  Array.from({ length: n }, () => ({ at, serviceMs: ms }));

export const loadOf = (requests: Record<string, ServedRequest[]>, untilMs: number): TraceLoad => ({
  requests: new Map(Object.entries(requests).map(([m, r]) => [m, r.sort((a, b) => a.at - b.at)])),
  from: FROM,
  until: FROM + untilMs,
});
