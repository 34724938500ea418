import { startingReplicas, type TraceLoad } from './experiment.ts';
import type { Scenario } from './scenario.ts';
import { type ReadySlots, ServingPool } from './serving-pool.ts';
import { replicaConcurrency } from './world.ts';

/**
 * The most any policy could cover a model's load if it adds no replica before the model's requests
 * first wait (docs/simulation.md "What no rule that waits for the load can cover"). Such a policy has
 * only its starting replicas until one placed at that first wait is ready, a start delay later; the
 * bound then lets it know the whole trace, so that from that moment no request waits. llmgw's rules,
 * the HPA's and Ray's at the measured target add replicas only once the load passes what the ready
 * ones serve: none of them can cover more.
 */
export interface FirstWaitBound {
  model: string;
  /** Share of ticks at which no request waits, as figures.ts counts "covered". */
  covered: number;
  /** Offset from the start of the run of the first tick at which a request waits (ms); null: none. */
  firstWaitMs: number | null;
}

/** Every model's bound on the scenario's load, ticking as the simulator does (run.ts). */
export function firstWaitBounds(scenario: Scenario, load: TraceLoad, tickMs = 1000): FirstWaitBound[] {
  return scenario.models.map((model) => {
    const slots = replicaConcurrency(scenario, model, model.profiles[0].name);
    const starting: ReadySlots = new Map(
      Array.from({ length: startingReplicas(scenario, load, model.name) }, (_, i) => [
        `starting-${i}`,
        slots,
      ]),
    );
    const pool = new ServingPool(load.requests.get(model.name) ?? []);
    const ticks = Math.ceil((load.until - load.from) / tickMs);
    let firstWaitMs: number | null = null;
    let waited = 0;
    for (let i = 0; i < ticks; i++) {
      const now = load.from + i * tickMs;
      const ready =
        firstWaitMs !== null && now - load.from >= firstWaitMs + scenario.startDelayMs ? ENOUGH : starting;
      pool.admit(now, ready);
      if (pool.waiting > 0) {
        waited++;
        firstWaitMs ??= i * tickMs;
      }
      pool.advance(now, now + tickMs, ready);
    }
    return { model: model.name, covered: 1 - waited / ticks, firstWaitMs };
  });
}

/** Slots for whatever the trace offers: the replicas a policy that knew it would have ready. */
const ENOUGH: ReadySlots = new Map([['enough', Number.POSITIVE_INFINITY]]);
