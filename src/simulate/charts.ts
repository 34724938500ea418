import * as vega from 'vega';
import * as vl from 'vega-lite';
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

/** GPUs left unallocated as the Alibaba pods arrive, one line per placer. */
export function placementSpec(runs: readonly PlacementRun[]): vl.TopLevelSpec {
  return {
    $schema: 'https://vega.github.io/schema/vega-lite/v6.json',
    title: 'Alibaba openb (1,213 GPU nodes): GPUs unallocated as pods arrive (fractions rounded up)',
    data: {
      values: [
        ...runs.flatMap((r) =>
          r.points.map((p) => ({
            placer: r.placer,
            arrived: 100 * p.arrived,
            unallocated: 100 * p.unallocated,
          })),
        ),
        // What would stay free if every pod held just the share it asked for: the cost of rounding up.
        ...(runs[0]?.points ?? []).map((p) => ({
          placer: 'requests as asked (bound)',
          arrived: 100 * p.arrived,
          unallocated: Math.max(0, 100 * (1 - p.arrived)),
        })),
      ],
    },
    mark: { type: 'line', strokeWidth: 1.5 },
    encoding: {
      x: {
        field: 'arrived',
        type: 'quantitative',
        title: "arrived pods' GPU requests (% of the cluster's GPUs)",
      },
      y: { field: 'unallocated', type: 'quantitative', title: 'GPUs unallocated (%)' },
      color: { field: 'placer', type: 'nominal' },
    },
    width: 560,
    height: 320,
  };
}
