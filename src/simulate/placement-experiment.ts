import { dataFile } from './data-dir.ts';
import {
  dotProduct,
  firstFit,
  llmgwBestFit,
  type PlacementRun,
  readNodes,
  readPods,
  replayPlacement,
} from './placement-replay.ts';

const NODES = 'alibaba-gpu-2023/openb_node_list_gpu_node.csv';
const PODS = 'alibaba-gpu-2023/openb_pod_list_default.csv';

/** The Alibaba pods in creation order on its 1,213 GPU nodes, by llmgw's best fit and two baselines. */
export function runPlacements(dir?: string, onProgress: (placer: string) => void = () => {}): PlacementRun[] {
  const nodes = readNodes(dataFile(NODES, dir));
  const pods = readPods(dataFile(PODS, dir));
  return (
    [
      ['llmgw-best-fit', llmgwBestFit],
      ['dot-product', dotProduct],
      ['first-fit', firstFit],
    ] as const
  ).map(([name, placer]) => {
    onProgress(name);
    return replayPlacement(name, placer, nodes, pods);
  });
}

const pct = (share: number) => `${(100 * share).toFixed(2)}%`;

export function placementTable(runs: readonly PlacementRun[]): string {
  const header = [
    'placer',
    'placed',
    'refused',
    'refused GPUs',
    'rounded-up GPUs',
    'unallocated',
    'serving none',
  ];
  const rows = runs.map((r) => [
    r.placer,
    String(r.placed),
    String(r.refused),
    r.refusedGpus.toFixed(1),
    r.roundedUpGpus.toFixed(1),
    pct(r.points.at(-1)?.unallocated ?? 1),
    pct(r.points.at(-1)?.idle ?? 1),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  return [header, ...rows].map((row) => row.map((cell, i) => cell.padEnd(widths[i])).join('  ')).join('\n');
}

export const placementPairs = (runs: readonly PlacementRun[]): Record<string, string> =>
  Object.fromEntries(
    runs.flatMap((r) => [
      [`placement.${r.placer}.refused`, String(r.refused)],
      [`placement.${r.placer}.refused_gpus`, r.refusedGpus.toFixed(1)],
      [`placement.${r.placer}.unallocated`, (r.points.at(-1)?.unallocated ?? 1).toFixed(4)],
      [`placement.${r.placer}.serving_none`, (r.points.at(-1)?.idle ?? 1).toFixed(4)],
    ]),
  );
