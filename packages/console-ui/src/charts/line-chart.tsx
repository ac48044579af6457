import { linear, niceMax, path } from './scale.js';

export interface Series {
  points: readonly (readonly [number, number])[];
  /** CSS class of the line: `line` (blue) or `line2` (red). */
  kind?: 'line' | 'line2';
}

export interface LineChartProps {
  label: string;
  series: readonly Series[];
  /** A shaded band (a baseline's expected range) under the lines. */
  band?: readonly { x: number; lo: number; hi: number }[];
  /** Dots instead of lines, with their own class. */
  marks?: readonly { x: number; y: number; kind: 'fired' | 'resolved' }[];
  formatX(x: number): string;
  testId?: string;
}

const W = 600;
const H = 170;
const M = { left: 46, right: 10, top: 10, bottom: 24 };

/** A small line chart drawn as SVG: no library, no inline style (the CSP forbids it); the label says what it shows. */
export function LineChart({ label, series, band, marks, formatX, testId }: LineChartProps) {
  // A sample not known (NaN: a gap in the line) must not make the axis NaN, or the line leaves the chart.
  const xs = [...series.flatMap((s) => s.points.map((p) => p[0])), ...(band ?? []).map((b) => b.x), ...(marks ?? []).map((m) => m.x)];
  const ys = [...series.flatMap((s) => s.points.map((p) => p[1])), ...(band ?? []).map((b) => b.hi), ...(marks ?? []).map((m) => m.y)];
  const finiteXs = xs.filter(Number.isFinite);
  const x0 = finiteXs.length ? Math.min(...finiteXs) : 0;
  const x1 = finiteXs.length ? Math.max(...finiteXs) : 1;
  const yMax = niceMax(Math.max(0, ...ys.filter(Number.isFinite)));
  const x = linear(x0, x1, M.left, W - M.right);
  const y = linear(0, yMax, H - M.bottom, M.top);
  const bandPath =
    band && band.length > 1
      ? `${path(band.map((b) => [x(b.x), y(b.hi)] as const))}L${[...band]
          .reverse()
          .map((b) => `${x(b.x).toFixed(1)} ${y(Math.max(0, b.lo)).toFixed(1)}`)
          .join('L')}Z`
      : undefined;
  return (
    <svg class="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} data-testid={testId}>
      <title>{label}</title>
      {bandPath && <path class="band" d={bandPath} />}
      <line class="axis" x1={M.left} y1={H - M.bottom} x2={W - M.right} y2={H - M.bottom} />
      <line class="axis" x1={M.left} y1={M.top} x2={M.left} y2={H - M.bottom} />
      <text class="tick" x={M.left - 4} y={M.top + 8} text-anchor="end">
        {yMax.toLocaleString('en-US')}
      </text>
      <text class="tick" x={M.left - 4} y={H - M.bottom} text-anchor="end">
        0
      </text>
      <text class="tick" x={M.left} y={H - 6}>
        {xs.length ? formatX(x0) : ''}
      </text>
      <text class="tick" x={W - M.right} y={H - 6} text-anchor="end">
        {xs.length ? formatX(x1) : ''}
      </text>
      {series.map((s, i) => (
        <path key={i} class={s.kind ?? 'line'} d={path(s.points.map(([px, py]) => [x(px), y(py)] as const))} />
      ))}
      {(marks ?? []).map((m, i) => (
        <circle key={i} class={m.kind} cx={x(m.x)} cy={y(m.y)} r={4} />
      ))}
    </svg>
  );
}
