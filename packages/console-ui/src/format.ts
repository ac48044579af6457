/** Display helpers: pure, no DOM. */

export function num(n: number | null | undefined, digits = 1): string {
  if (n === null || n === undefined || !Number.isFinite(n)) return '–';
  if (Math.abs(n) >= 1000) return Math.round(n).toLocaleString('en-US');
  return Number.isInteger(n) ? String(n) : n.toFixed(digits);
}

export function percent(share: number | null | undefined): string {
  if (share === null || share === undefined || !Number.isFinite(share)) return '–';
  return `${(share * 100).toFixed(share < 0.01 && share > 0 ? 2 : 1)} %`;
}

/** `2026-11-26 07:32:56` in UTC: one time zone for everyone reading the same incident. */
export function time(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '–';
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d+Z$/, ' UTC');
}

/** `3h 20m`, `45s`: how long until (positive) or since (negative) a time. */
export function span(ms: number): string {
  const s = Math.max(0, Math.round(Math.abs(ms) / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/** Equal-width buckets of `times` over [from, to): what a bar chart of "how many over time" needs. */
export function histogram(times: readonly number[], from: number, to: number, buckets: number): { at: number; count: number }[] {
  const width = Math.max(1, (to - from) / buckets);
  const out = Array.from({ length: buckets }, (_, i) => ({ at: from + i * width, count: 0 }));
  for (const t of times) {
    if (t < from || t >= to) continue;
    out[Math.min(buckets - 1, Math.floor((t - from) / width))]!.count++;
  }
  return out;
}
