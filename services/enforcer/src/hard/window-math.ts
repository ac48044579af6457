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
 * The sliding-window counter of hardLimit-n.lua, in process: the same arithmetic, so
 * a `local` failure mode limits the way Redis did. Rolls `counts` forward to `nowMs`
 * and counts the request, for its `cost`, when it is admitted (whole or not at all).
 */
export function slidingWindowHit(counts: WindowCounts, limit: number, intervalMs: number, nowMs: number, cost = 1): LimitReply {
  const w = Math.floor(nowMs / intervalMs);
  if (w !== counts.window) {
    counts.previous = w === counts.window + 1 ? counts.current : 0;
    counts.current = 0;
    counts.window = w;
  }
  const into = nowMs - w * intervalMs;
  const estimate = (counts.previous * (intervalMs - into)) / intervalMs + counts.current;
  if (estimate + cost <= limit) {
    counts.current += cost;
    return { allowed: true, remaining: Math.floor(limit - estimate - cost), retryAfterMs: 0 };
  }
  // A cost over the limit is never admitted: a whole window is the honest wait.
  if (cost > limit) return { allowed: false, remaining: 0, retryAfterMs: intervalMs };
  const wait =
    counts.current + cost > limit ? (w + 1) * intervalMs - nowMs + intervalMs * (1 - (limit - cost) / counts.current) : intervalMs * (1 - (limit - cost - counts.current) / counts.previous) - into;
  return { allowed: false, remaining: 0, retryAfterMs: Math.max(1, Math.ceil(wait)) };
}
