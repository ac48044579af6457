import { emptyCounts, slidingWindowHit, type WindowCounts } from './window-math.js';
import type { LimitReply } from './types.js';

/**
 * The `local` failure mode: an in-process sliding-window counter per (policy,
 * subject) with the policy's own threshold, used only while Redis cannot answer.
 * Each enforcer instance limits on its own, so N instances admit up to N times the
 * limit between them. Memory is bounded: past `maxEntries` the least recently used
 * entry goes (Map order is insertion order; a hit moves its entry to the end).
 */
export class LocalLimiter {
  private readonly entries = new Map<string, WindowCounts>();

  constructor(private readonly maxEntries: number) {
    if (!(maxEntries >= 1)) throw new RangeError(`LocalLimiter: maxEntries must be at least 1, got ${maxEntries}`);
  }

  get size(): number {
    return this.entries.size;
  }

  hit(key: string, limit: number, intervalMs: number, nowMs: number, cost = 1): LimitReply {
    let counts = this.entries.get(key);
    if (counts === undefined) {
      counts = emptyCounts();
      if (this.entries.size >= this.maxEntries) this.evictOldest();
    } else {
      this.entries.delete(key);
    }
    this.entries.set(key, counts);
    return slidingWindowHit(counts, limit, intervalMs, nowMs, cost);
  }

  private evictOldest(): void {
    const oldest = this.entries.keys().next();
    if (oldest.done !== true) this.entries.delete(oldest.value);
  }
}
