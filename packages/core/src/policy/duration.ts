import { BanstreamError } from '../errors.js';
import type { Duration } from './schema.js';

/** Milliseconds per unit, largest first so formatDuration picks the shortest spelling. */
const UNITS = [
  ['d', 86_400_000],
  ['h', 3_600_000],
  ['m', 60_000],
  ['s', 1_000],
  ['ms', 1],
] as const;

const UNIT_MS: Readonly<Record<string, number>> = Object.fromEntries(UNITS);
const TEXT = /^([1-9][0-9]*)(ms|s|m|h|d)$/;

/**
 * Milliseconds in a policy duration: `500ms`, `30s`, `5m`, `1h`, `7d`, or a bare
 * positive integer meaning seconds (YAML `interval: 30`). Throws POLICY_INVALID
 * on anything else, including values too large to count in exact milliseconds.
 */
export function parseDuration(d: Duration): number {
  const ms = tryParseDuration(d);
  if (ms === undefined) {
    throw new BanstreamError('POLICY_INVALID', `invalid duration ${JSON.stringify(d)}: expected a duration such as 500ms, 30s, 5m, 1h, 7d`, {
      details: { value: d },
    });
  }
  return ms;
}

/** parseDuration without the throw, for validators that report the problem themselves. */
export function tryParseDuration(d: unknown): number | undefined {
  let ms: number;
  if (typeof d === 'number') {
    if (!Number.isInteger(d) || d <= 0) return undefined;
    ms = d * 1000;
  } else if (typeof d === 'string') {
    const m = TEXT.exec(d);
    if (m === null) return undefined;
    ms = Number(m[1]) * (UNIT_MS[m[2] ?? ''] ?? Number.NaN);
  } else {
    return undefined;
  }
  return Number.isSafeInteger(ms) ? ms : undefined;
}

/**
 * The shortest exact spelling of `ms`: 90_000 → `90s`, 3_600_000 → `1h`,
 * 1_500 → `1500ms`. Never rounds, so parseDuration(formatDuration(ms)) === ms for
 * any positive integer; 0 is `0ms` (a valid reading, not a valid policy value).
 */
export function formatDuration(ms: number): string {
  if (!Number.isSafeInteger(ms) || ms < 0) throw new RangeError(`formatDuration: expected a non-negative integer of milliseconds, got ${ms}`);
  if (ms === 0) return '0ms';
  for (const [unit, size] of UNITS) {
    if (ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`; // unreachable: every integer is a multiple of 1 ms
}
