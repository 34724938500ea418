import type { Scenario } from './scenario.ts';
import { type ServedRequest, ServingPool } from './serving-pool.ts';
import { VirtualCluster } from './virtual-cluster.ts';
import { bestFitNode, type Controller, readySlots, type World } from './world.ts';

/** One model's load and capacity at each tick. */
export interface ModelSeries {
  /** Requests in flight: running plus waiting (L, as the gateway reports it). */
  load: Int32Array;
  /** Slots of its ready replicas. */
  capacity: Int32Array;
  /** Requests that found no free slot: the shortfall. */
  waiting: Int32Array;
}

export interface RunResult {
  policy: string;
  from: number;
  tickMs: number;
  series: Map<string, ModelSeries>;
  pools: Map<string, ServingPool>;
  cluster: VirtualCluster;
}

export interface RunOptions {
  from: number;
  until: number;
  /** The simulated clock's step: load is sampled and every policy may act once per tick. */
  tickMs?: number;
  /** Ready replicas per model at `from`: the cluster as it stood before the trace began. */
  initial: Record<string, number>;
  /** Called every so many ticks (progress lines). */
  onProgress?: (done: number) => void;
}

/**
 * Replays the requests through a policy on a simulated clock. Each tick: replicas move on (ready after
 * the start delay, stopped after the drain grace), the policy acts on what it sees, then the ready
 * slots serve the tick's arrivals and completions, and held GPUs are counted.
 */
export function simulate(
  scenario: Scenario,
  requests: ReadonlyMap<string, readonly ServedRequest[]>,
  controller: Controller,
  options: RunOptions,
): RunResult {
  const tickMs = options.tickMs ?? 1000;
  const { from, until } = options;
  const ticks = Math.ceil((until - from) / tickMs);
  const cluster = new VirtualCluster(scenario.nodes, scenario);
  placeInitial(scenario, cluster, options.initial, from);
  const pools = new Map(scenario.models.map((m) => [m.name, new ServingPool(requests.get(m.name) ?? [])]));
  const series = new Map(
    scenario.models.map((m) => [
      m.name,
      { load: new Int32Array(ticks), capacity: new Int32Array(ticks), waiting: new Int32Array(ticks) },
    ]),
  );
  for (let i = 0; i < ticks; i++) {
    const now = from + i * tickMs;
    const changed = cluster.advance(now);
    const world: World = { now, scenario, cluster, pools, changed };
    controller.step(world);
    for (const model of scenario.models) {
      const pool = pools.get(model.name)!;
      const ready = readySlots(world, model);
      pool.admit(now, ready);
      const figures = series.get(model.name)!;
      figures.load[i] = pool.running + pool.waiting;
      figures.capacity[i] = [...ready.values()].reduce((total, c) => total + c, 0);
      figures.waiting[i] = pool.waiting;
      pool.advance(now, now + tickMs, ready);
    }
    cluster.accrue(now, now + tickMs);
    if (options.onProgress && i % 600 === 599) options.onProgress(i + 1);
  }
  for (const pool of pools.values()) pool.closeAt(from + ticks * tickMs);
  return { policy: controller.name, from, tickMs, series, pools, cluster };
}

/**
 * Ready replicas of each model's first profile, placed by best fit, before the clock starts; those the
 * cluster has no room for are not there (a policy that wants them asks again).
 */
function placeInitial(
  scenario: Scenario,
  cluster: VirtualCluster,
  initial: Record<string, number>,
  at: number,
) {
  for (const model of scenario.models) {
    for (let k = 0; k < (initial[model.name] ?? 0); k++) {
      const node = bestFitNode({ now: at, scenario, cluster }, model.profiles[0]);
      if (!node) break;
      const replica = cluster.add(model.name, model.profiles[0], node, at - scenario.startDelayMs, true);
      replica.state = 'ready';
    }
  }
  cluster.starts = []; // what ran before the clock is no churn
}
