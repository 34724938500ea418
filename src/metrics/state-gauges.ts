import { Gauge, Registry } from 'prom-client';
import { STATE_GAUGES, type StateFigures, type StateGauge } from './state-gauge-definitions.ts';

/**
 * The state gauges in a registry of their own. Each time it is written out, every gauge takes its
 * samples from `current()`, the figures of one read of the store, so all of them agree; none when
 * the read failed (no stale samples).
 */
export function stateGauges(current: () => StateFigures | null): Registry {
  const registry = new Registry();
  for (const [name, { help, labelNames }] of Object.entries(STATE_GAUGES)) {
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      collect() {
        this.reset();
        for (const { labels, value } of current()?.[name as StateGauge] ?? []) this.set(labels, value);
      },
    });
  }
  return registry;
}
