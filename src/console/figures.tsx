import { DIMENSIONS, type Dimension, type Resources } from '../domain/resources.ts';
import type { LoadPoint } from '../store/changes.ts';

const percent = (value: number, scale: number) => `${scale > 0 ? Math.min(100, (value / scale) * 100) : 0}%`;

/**
 * A horizontal bar: filled segments side by side (each a share of `scale`), and thin marks at
 * values such as a guarantee or a limit. What it shows is also written beside it, for screen readers
 * and for anyone who does not read colours.
 */
export function Meter(props: {
  scale: number;
  segments: { value: number; kind: string }[];
  marks?: { value: number; kind: string }[];
  label: string;
}) {
  return (
    <div class="meter" role="img" aria-label={props.label} title={props.label}>
      {props.segments.map((s) => (
        <span class={`segment ${s.kind}`} style={`width:${percent(s.value, props.scale)}`} />
      ))}
      {(props.marks ?? []).map((m) => (
        <span class={`mark ${m.kind}`} style={`left:${percent(m.value, props.scale)}`} />
      ))}
    </div>
  );
}

/** Load against capacity over the last hour, as the decisions of that hour saw them, ending with now. */
export function Sparkline(props: { points: LoadPoint[]; now: LoadPoint; hourMs: number }) {
  const points = [...props.points, props.now];
  const width = 120;
  const height = 28;
  const top = Math.max(1, ...points.map((p) => Math.max(p.in_flight ?? 0, p.capacity_at_slo)));
  const x = (at: number) => (width * (at - (props.now.at - props.hourMs))) / props.hourMs;
  const y = (value: number) => height - 2 - ((height - 4) * value) / top;
  // Steps, not slopes: a figure holds until the next decision changes it.
  const line = (value: (p: LoadPoint) => number) =>
    points
      .map((p, i) => {
        const here = `${x(p.at).toFixed(1)},${y(value(p)).toFixed(1)}`;
        return i === 0 ? here : `${x(p.at).toFixed(1)},${y(value(points[i - 1]!)).toFixed(1)} ${here}`;
      })
      .join(' ');
  return (
    <svg
      class="sparkline"
      viewBox={`0 0 ${width} ${height}`}
      width={width}
      height={height}
      role="img"
      aria-label={`the last hour: ${points.length - 1} decisions, at most ${top} in flight or at SLO`}
    >
      <polyline class="capacity" points={line((p) => p.capacity_at_slo)} />
      <polyline class="load" points={line((p) => p.in_flight ?? 0)} />
    </svg>
  );
}

/** The dimensions worth a bar: those a quota or capacity sets (0 included), or something holds. */
export function dimensionsShown(set: (Resources | undefined)[], held: Resources[] = []): Dimension[] {
  return DIMENSIONS.filter((d) => set.some((r) => r?.[d] !== undefined) || held.some((r) => (r[d] ?? 0) > 0));
}
