import type { LimitReply } from './types.js';

/** Counts of the two fixed windows a sliding-window counter keeps. */
export interface WindowCounts {
  /** floor(now / interval) of `current`. */
  window: number;
  current: number;
  previous: number;
}

export function emptyCounts(): WindowCounts {
  return { window: 0, current: 0, previous: 0 };
}

/**
 * The sliding-window counter of slidingWindowLimit-n.lua, in process: the same
 * arithmetic, so a `local` failure mode limits the way Redis did. Rolls `counts`
 * forward to `nowMs` and counts the request when it is admitted.
 */
export function slidingWindowHit(counts: WindowCounts, limit: number, intervalMs: number, nowMs: number): LimitReply {
  const w = Math.floor(nowMs / intervalMs);
  if (w !== counts.window) {
    counts.previous = w === counts.window + 1 ? counts.current : 0;
    counts.current = 0;
    counts.window = w;
  }
  const into = nowMs - w * intervalMs;
  const estimate = (counts.previous * (intervalMs - into)) / intervalMs + counts.current;
  if (estimate + 1 <= limit) {
    counts.current += 1;
    return { allowed: true, remaining: Math.floor(limit - estimate - 1), retryAfterMs: 0 };
  }
  const wait = counts.current + 1 > limit ? (w + 1) * intervalMs - nowMs + intervalMs * (1 - (limit - 1) / counts.current) : intervalMs * (1 - (limit - 1 - counts.current) / counts.previous) - into;
  return { allowed: false, remaining: 0, retryAfterMs: Math.max(1, Math.ceil(wait)) };
}
