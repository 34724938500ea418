import type { PolicyFigures } from './figures.ts';

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
