import type { PolicyFigures } from './figures.ts';
import type { FirstWaitBound } from './first-wait-bound.ts';
import { clock } from './uncovered.ts';

const pct = (share: number) => `${(100 * share).toFixed(2)}%`;
const seconds = (ms: number) => (ms / 1000).toFixed(2);

/** The figures as a table for people, one row per policy and model. */
export function figuresTable(figures: readonly PolicyFigures[]): string {
  const header = [
    'policy',
    'model',
    'covered',
    'p50 wait s',
    'p99 wait s',
    'GPU-h',
    'started',
    'max short',
    'taken away',
  ];
  const rows = figures.map((f) => [
    f.policy,
    f.model,
    pct(f.covered),
    seconds(f.p50WaitMs),
    seconds(f.p99WaitMs),
    f.gpuHours.toFixed(2),
    String(f.started),
    String(f.largestShortfall),
    String(f.takenAway),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  return [header, ...rows].map((r) => r.map((cell, i) => cell.padEnd(widths[i])).join('  ')).join('\n');
}

/**
 * The issue's goal, per model, measured: llmgw covers the load 99% of the time; it uses fewer GPU-hours
 * than every peer that covers it as often; and its p99 queueing delay against the best peer's.
 */
export function goalLines(figures: readonly PolicyFigures[]): string[] {
  const models = [...new Set(figures.map((f) => f.model))];
  return models.flatMap((model) => {
    const ours = figures.find((f) => f.policy === 'llmgw' && f.model === model);
    if (!ours) return [];
    const peers = figures.filter((f) => f.policy !== 'llmgw' && f.model === model);
    const asOften = peers.filter((f) => f.covered >= ours.covered);
    const cheaper = asOften.filter((f) => f.gpuHours <= ours.gpuHours);
    const bestP99 = Math.min(...peers.map((f) => f.p99WaitMs));
    const best = peers.filter((f) => f.p99WaitMs === bestP99).map((f) => f.policy);
    return [
      `${model}: llmgw covers the load ${pct(ours.covered)} of the time (goal 99%: ${ours.covered >= 0.99 ? 'met' : 'missed'})`,
      `${model}: peers covering it as often: ${asOften.map((f) => `${f.policy} ${f.gpuHours.toFixed(2)} GPU-h`).join(', ') || 'none'}; llmgw ${ours.gpuHours.toFixed(2)} GPU-h (${cheaper.length === 0 ? 'fewer than each' : `not fewer than ${cheaper.map((f) => f.policy).join(', ')}`})`,
      `${model}: p99 wait llmgw ${seconds(ours.p99WaitMs)} s, best peer ${best.join(', ')} ${seconds(bestP99)} s (${ours.p99WaitMs <= bestP99 ? 'llmgw as good or better' : `llmgw ${seconds(ours.p99WaitMs - bestP99)} s worse`})`,
    ];
  });
}

/**
 * Per model, the most a policy that adds replicas only once requests wait could cover, beside llmgw's
 * coverage: "code: a policy that adds replicas only once requests wait covers at most 98.85% (goal 99%:
 * out of reach): they first wait at 4:35, and a replica placed then serves from 6:05; llmgw 98.63%".
 */
export function boundLines(
  bounds: readonly FirstWaitBound[],
  figures: readonly PolicyFigures[],
  startDelayMs: number,
): string[] {
  return bounds.map((bound) => {
    const ours = figures.find((f) => f.policy === 'llmgw' && f.model === bound.model);
    const llmgw = ours ? `; llmgw ${pct(ours.covered)}` : '';
    if (bound.firstWaitMs === null)
      return `${bound.model}: no request waits on the replicas every dynamic policy starts with${llmgw}`;
    const reach = bound.covered >= 0.99 ? 'within reach' : 'out of reach';
    return (
      `${bound.model}: a policy that adds replicas only once requests wait covers at most ` +
      `${pct(bound.covered)} (goal 99%: ${reach}): they first wait at ${clock(bound.firstWaitMs)}, and a ` +
      `replica placed then serves from ${clock(bound.firstWaitMs + startDelayMs)}${llmgw}`
    );
  });
}

/** The bounds as RESULT pairs, keyed `scenario.first-wait-bound.model.covered`. */
export const boundPairs = (scenario: string, bounds: readonly FirstWaitBound[]): Record<string, string> =>
  Object.fromEntries(
    bounds.map((b) => [`${scenario}.first-wait-bound.${b.model}.covered`, b.covered.toFixed(4)]),
  );

/** Each policy's and model's figures as RESULT pairs, keyed `scenario.policy.model.figure`. */
export function resultPairs(scenario: string, figures: readonly PolicyFigures[]): Record<string, string> {
  return Object.fromEntries(
    figures.flatMap((f) => {
      const key = `${scenario}.${f.policy}.${f.model}`;
      return [
        [`${key}.covered`, f.covered.toFixed(4)],
        [`${key}.p99_ms`, String(Math.round(f.p99WaitMs))],
        [`${key}.gpu_h`, f.gpuHours.toFixed(2)],
        [`${key}.started`, String(f.started)],
        [`${key}.taken_away`, String(f.takenAway)],
      ];
    }),
  );
}

/** `RESULT name key=value ...`: one line for tools. */
export const resultLine = (name: string, pairs: Record<string, string>) =>
  `RESULT ${name} ${Object.entries(pairs)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ')}`;
