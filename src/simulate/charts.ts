import * as vega from 'vega';
import * as vl from 'vega-lite';
import { FGD_PUBLISHED } from './fgd-published.ts';
import type { PolicyFigures } from './figures.ts';
import type { PlacementRun } from './placement-replay.ts';
import type { RunResult } from './run.ts';

/** One point per this many seconds: an hour draws in 360 steps per line. */
const BUCKET_S = 10;

/** A vega-lite spec drawn to SVG in Node (vega's headless view), no browser. */
export async function toSvg(spec: vl.TopLevelSpec): Promise<string> {
  const view = new vega.View(vega.parse(vl.compile(spec).spec), { renderer: 'none' });
  return view.toSVG();
}

/**
 * Requests in flight against the ready replicas' slots, one panel per policy, for one model. Each
 * bucket shows the most in flight and the fewest slots in it, so a short shortfall still shows.
 */
export function loadCapacitySpec(runs: readonly RunResult[], model: string): vl.TopLevelSpec {
  const values = runs.flatMap((run) => {
    const { load, capacity } = run.series.get(model)!;
    const perBucket = Math.round((BUCKET_S * 1000) / run.tickMs);
    const rows = [];
    for (let i = 0; i < load.length; i += perBucket) {
      const minute = (i * run.tickMs) / 60_000;
      const inFlight = Math.max(...load.subarray(i, i + perBucket));
      const slots = Math.min(...capacity.subarray(i, i + perBucket));
      rows.push({ policy: run.policy, minute, series: 'in flight', value: inFlight });
      rows.push({ policy: run.policy, minute, series: 'ready slots', value: slots });
    }
    return rows;
  });
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: `${model}: requests in flight and the slots of ready replicas (${BUCKET_S} s buckets)`,
    data: { values },
    mark: { type: 'line', strokeWidth: 1, interpolate: 'step-after' },
    encoding: {
      x: { field: 'minute', type: 'quantitative', title: 'minutes into the trace' },
      y: { field: 'value', type: 'quantitative', title: 'requests' },
      color: { field: 'series', type: 'nominal', title: null },
      row: { field: 'policy', type: 'nominal', title: null, sort: runs.map((r) => r.policy) },
    },
    width: 640,
    height: 90,
    resolve: { scale: { y: 'independent' } },
  };
}

/** GPU-hours against the share of time capacity covered load: one panel per model, a point per policy. */
export function costCoverageSpec(figures: readonly PolicyFigures[]): vl.TopLevelSpec {
  const x = { field: 'gpuHours', type: 'quantitative', title: 'GPU-hours' } as const;
  const y = { field: 'coveredPercent', type: 'quantitative', title: 'time covered (%)' } as const;
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'GPU-hours against SLO attainment (share of time capacity covers load)',
    data: {
      values: figures.map((f) => ({ ...f, coveredPercent: Math.round(f.covered * 10_000) / 100 })),
    },
    facet: { column: { field: 'model', type: 'nominal', title: null } },
    spec: {
      width: 360,
      height: 300,
      layer: [
        {
          mark: { type: 'point', filled: true, size: 90 },
          encoding: { x, y: { ...y, scale: { zero: false } }, color: { field: 'policy', type: 'nominal' } },
        },
        {
          mark: { type: 'text', dx: 8, align: 'left', fontSize: 9 },
          encoding: { x, y, text: { field: 'policy' } },
        },
      ],
    },
    resolve: { scale: { x: 'independent', y: 'independent' } },
  };
}

/**
 * GPUs serving no request as the Alibaba pods arrive: llmgw's best fit and the baselines with whole
 * GPUs (fractions rounded up), beside the curves FGD's authors published for the same pods with GPU
 * sharing, told apart by their stroke.
 */
export function placementSpec(runs: readonly PlacementRun[]): vl.TopLevelSpec {
  const ours = runs.flatMap((r) =>
    r.points.map((p) => ({ placer: r.placer, gpus: 'whole', arrived: 100 * p.arrived, idle: 100 * p.idle })),
  );
  const published = Object.entries(FGD_PUBLISHED).flatMap(([placer, points]) =>
    points.map(([arrived, idle]) => ({ placer, gpus: 'shared (published)', arrived, idle })),
  );
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'Alibaba openb, 1,213 GPU nodes: GPUs serving no request as pods arrive',
    data: { values: [...ours, ...published] },
    mark: { type: 'line', strokeWidth: 1.5 },
    encoding: {
      x: {
        field: 'arrived',
        type: 'quantitative',
        title: "arrived pods' GPU requests (% of the cluster's GPUs)",
      },
      y: { field: 'idle', type: 'quantitative', title: 'GPUs serving no request (%)' },
      color: { field: 'placer', type: 'nominal' },
      strokeDash: { field: 'gpus', type: 'nominal', title: 'GPUs' },
    },
    width: 560,
    height: 340,
  };
}
