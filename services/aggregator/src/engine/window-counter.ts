import { ADD_LATE, WindowStore } from '@banstream/core';

/** Sub-window buckets per window; falls back to fewer when W is not a multiple. */
const BUCKET_CHOICES = [4, 5, 3, 2, 1] as const;

export interface CountResult {
  /** Estimated events in (t - W, t] after this add. */
  count: number;
  late: boolean;
}

/**
 * Sliding-window counts per (policy, subject) for any number of window lengths:
 * one WindowStore per length, keys `policyId|subject`. Watermarks are the caller's,
 * so each source of events (one partition) judges lateness by its own progress and
 * a replay of that source counts exactly as the first pass did.
 */
export class WindowCounter {
  private readonly stores = new Map<number, WindowStore>();
  private readonly pair = new Uint32Array(2);

  constructor(private readonly graceMs: number) {}

  /** Tracked (policy, subject, window) entries. */
  get keys(): number {
    let n = 0;
    for (const s of this.stores.values()) n += s.size;
    return n;
  }

  get bytes(): number {
    let n = 0;
    for (const s of this.stores.values()) n += s.byteLength;
    return n;
  }

  add(key: string, windowMs: number, timeMs: number, count: number, watermarkMs: number): CountResult {
    const store = this.store(windowMs);
    store.fingerprintInto(key, this.pair);
    const h1 = this.pair[0]!;
    const h2 = this.pair[1]!;
    const late = store.addHashed(h1, h2, timeMs, count, watermarkMs) === ADD_LATE;
    return { count: store.estimateHashed(h1, h2, Math.max(timeMs, watermarkMs)), late };
  }

  /** The count at `atMs` without adding; 0 for an unknown key. */
  estimate(key: string, windowMs: number, atMs: number): number {
    return this.stores.get(windowMs)?.estimate(key, atMs) ?? 0;
  }

  /** Forgets keys idle for longer than their window and the grace period. */
  evictIdle(nowMs: number, maxSlots: number): number {
    let evicted = 0;
    for (const s of this.stores.values()) evicted += s.evictIdle(nowMs, maxSlots);
    return evicted;
  }

  private store(windowMs: number): WindowStore {
    let store = this.stores.get(windowMs);
    if (!store) {
      const buckets = BUCKET_CHOICES.find((n) => windowMs % n === 0) ?? 1;
      store = new WindowStore({ windowMs, buckets, graceMs: this.graceMs });
      this.stores.set(windowMs, store);
    }
    return store;
  }
}
