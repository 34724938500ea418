import { readAzureTrace } from './azure-trace.ts';
import { dataFile } from './data-dir.ts';
import { figuresOf, type PolicyFigures } from './figures.ts';
import { llmgwController } from './llmgw.ts';
import { peakConcurrency } from './offered-load.ts';
import { hpaKeda } from './peers/hpa-keda.ts';
import { llmdWva } from './peers/llm-d-wva.ts';
import { RAY_SERVE_DEFAULTS, rayServe } from './peers/ray-serve.ts';
import { staticPeak } from './peers/static-peak.ts';
import { peerController } from './replica-count.ts';
import { type RunResult, simulate } from './run.ts';
import type { Scenario } from './scenario.ts';
import { servedRequests } from './service-time.ts';
import type { ServedRequest } from './serving-pool.ts';
import { type Controller, replicaConcurrency } from './world.ts';

/** The requests of every model's trace, and the window they span (from the first to the last arrival). */
export interface TraceLoad {
  requests: Map<string, ServedRequest[]>;
  from: number;
  until: number;
}

/** How long the clock runs on after the last arrival, so that what waits then is served and counted. */
const TAIL_MS = 60_000;

export function loadTraces(scenario: Scenario, dir?: string): TraceLoad {
  const traces = new Map(
    scenario.models.map((m) => [
      m.name,
      servedRequests(scenario, m, readAzureTrace(dataFile(scenario.traces[m.name], dir))),
    ]),
  );
  const all = [...traces.values()].flat();
  const from = Math.floor(Math.min(...all.map((r) => r.at)) / 1000) * 1000;
  // A model idle at first loses its trace's first requests; the run still starts with the earliest trace.
  const requests = new Map(
    [...traces].map(([name, served]) => {
      const idleUntil = from + (scenario.idleFirstMs.get(name) ?? 0);
      return [name, served.filter((r) => r.at >= idleUntil)];
    }),
  );
  return { requests, from, until: Math.max(...all.map((r) => r.at)) + TAIL_MS };
}

/**
 * The replicas every dynamic policy starts with: what the model's first minute needs, as a cluster that
 * was serving before the trace.
 */
export const startingReplicas = (scenario: Scenario, load: TraceLoad, name: string): number =>
  replicasForPeak(scenario, load, name, load.from, load.from + 60_000);

/** Replicas of the model's first profile that its peak in flight within [from, until) needs. */
function replicasForPeak(
  scenario: Scenario,
  load: TraceLoad,
  name: string,
  from?: number,
  until?: number,
): number {
  const model = scenario.models.find((m) => m.name === name)!;
  const c = replicaConcurrency(scenario, model, model.profiles[0].name);
  const peak = peakConcurrency(load.requests.get(name)!, from, until);
  return Math.min(model.max_replicas, Math.max(model.min_replicas, Math.ceil(peak / c)));
}

/** llmgw and its peers, each with its cited defaults and the same per-replica capacity. */
export function policies(scenario: Scenario, load: TraceLoad): Controller[] {
  return [
    llmgwController(),
    peerController('ray-serve', rayServe()),
    // Ray with target_ongoing_requests set to the measured concurrency: the one default a platform changes.
    peerController('ray-serve-c', (model) =>
      rayServe({
        ...RAY_SERVE_DEFAULTS,
        targetOngoingRequests: replicaConcurrency(scenario, model, model.profiles[0].name),
      })(),
    ),
    peerController('hpa-keda', hpaKeda()),
    peerController('llm-d-wva', llmdWva()),
    peerController('static-peak', (model) => staticPeak(replicasForPeak(scenario, load, model.name))),
  ];
}

/**
 * Every policy replays the same load on the same cluster. Each starts with the replicas the first
 * minute needs (the static allocation with its own), as a cluster that was serving before the trace.
 */
export function runPolicies(
  scenario: Scenario,
  load: TraceLoad,
  onProgress: (policy: string, done: number, of: number) => void = () => {},
): { runs: RunResult[]; figures: PolicyFigures[] } {
  const ticks = Math.ceil((load.until - load.from) / 1000);
  const initialFor = (policy: string) =>
    Object.fromEntries(
      scenario.models.map((m) => [
        m.name,
        policy === 'static-peak'
          ? replicasForPeak(scenario, load, m.name)
          : startingReplicas(scenario, load, m.name),
      ]),
    );
  const runs = policies(scenario, load).map((controller) =>
    simulate(scenario, load.requests, controller, {
      from: load.from,
      until: load.until,
      initial: initialFor(controller.name),
      onProgress: (done) => onProgress(controller.name, done, ticks),
    }),
  );
  return { runs, figures: runs.flatMap(figuresOf) };
}
