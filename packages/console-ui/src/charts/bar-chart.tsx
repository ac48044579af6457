import { linear, niceMax } from './scale.js';

export interface BarChartProps {
  label: string;
  bars: readonly { label: string; value: number }[];
  format?(v: number): string;
  testId?: string;
}

const W = 600;
const ROW = 20;
const LEFT = 170;

/** Horizontal bars with their labels and values (as text, so they read without the picture). */
export function BarChart({ label, bars, format = (v) => v.toLocaleString('en-US'), testId }: BarChartProps) {
  const max = niceMax(Math.max(0, ...bars.map((b) => b.value)));
  const w = linear(0, max, 0, W - LEFT - 80);
  const h = Math.max(ROW, bars.length * ROW + 4);
  return (
    <svg class="chart" viewBox={`0 0 ${W} ${h}`} role="img" aria-label={label} data-testid={testId}>
      <title>{label}</title>
      {bars.map((b, i) => (
        <g key={i}>
          <text class="tick" x={LEFT - 6} y={i * ROW + 14} text-anchor="end">
            {b.label.length > 28 ? `${b.label.slice(0, 27)}…` : b.label}
          </text>
          <rect class="bar" x={LEFT} y={i * ROW + 3} width={Math.max(1, w(b.value))} height={ROW - 6} />
          <text class="tick" x={LEFT + Math.max(1, w(b.value)) + 4} y={i * ROW + 14}>
            {format(b.value)}
          </text>
        </g>
      ))}
    </svg>
  );
}

/** Vertical bars over time (a histogram). */
export function TimeBars({ label, buckets, formatX, testId }: { label: string; buckets: readonly { at: number; count: number }[]; formatX(x: number): string; testId?: string }) {
  const H = 150;
  const max = niceMax(Math.max(0, ...buckets.map((b) => b.count)));
  const y = linear(0, max, 0, H - 34);
  const bw = (W - 50) / Math.max(1, buckets.length);
  return (
    <svg class="chart" viewBox={`0 0 ${W} ${H}`} role="img" aria-label={label} data-testid={testId}>
      <title>{label}</title>
      <line class="axis" x1={44} y1={H - 22} x2={W} y2={H - 22} />
      <text class="tick" x={40} y={14} text-anchor="end">
        {max}
      </text>
      {buckets.map((b, i) => (
        <rect key={i} class="bar" x={46 + i * bw} y={H - 22 - y(b.count)} width={Math.max(1, bw - 2)} height={y(b.count)} />
      ))}
      <text class="tick" x={46} y={H - 6}>
        {buckets.length ? formatX(buckets[0]!.at) : ''}
      </text>
      <text class="tick" x={W} y={H - 6} text-anchor="end">
        {buckets.length ? formatX(buckets[buckets.length - 1]!.at) : ''}
      </text>
    </svg>
  );
}
