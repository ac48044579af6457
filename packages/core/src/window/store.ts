/**
 * WindowStore: per-key sliding-window counts in one packed table. The design, the slot
 * layout and why are at the top of index.ts.
 */
import { BanstreamError } from '../errors.js';
import { EPOCH_LIMIT, EPOCH_MASK, NARROW_MAX, SPAN_BITS, SPAN_MASK, W_EPOCH, W_SPAN, windowLayout, type WindowLayout, type WindowConfig } from './config.js';
import { continuedFingerprintInto, keyFingerprintInto, fingerprintSeeds, prefixHash, type PrefixHash } from './hash.js';
import { removeSlot, rebased, sweepIdle, type SweepCursor } from './maintenance.js';
import { advance, countAt, exactEvent, promote, recordSpan, windowSum } from './slot.js';
import { SlotTable } from './table.js';
import { WidePool } from './wide.js';

/** Counted in its own bucket. */
export const ADD_OK = 0;
/** Not counted: older than now - graceMs, or older than the key's ring still holds. */
export const ADD_LATE = 1;
/** Counted at now + maxSkewMs: the event claimed a time further in the future. */
export const ADD_CLAMPED = 2;
export type AddResult = typeof ADD_OK | typeof ADD_LATE | typeof ADD_CLAMPED;

/** Events whose slots addBatchHashed reads ahead together. */
const PREFETCH_GROUP = 16;

/** Key prefixes whose hash state a store keeps at most. */
const MAX_PREFIXES = 1024;

export class WindowStore {
  readonly layout: WindowLayout;
  /** Absolute bucket number of relative epoch 0; NaN until the first add. */
  private origin = NaN;
  private table: SlotTable;
  private wide: WidePool;
  private readonly sweep: SweepCursor = { slot: 0 };
  private readonly seedA: number;
  private readonly seedB: number;
  private readonly scratch = new Uint32Array(2);
  /** Hash states of the key prefixes seen (fingerprintJoinedInto): one per policy and scope. */
  private readonly prefixes = new Map<string, PrefixHash>();
  // WindowLayout numbers as plain fields: one load each on the hot path.
  private readonly g: number;
  private readonly r: number;
  private readonly stride: number;
  private readonly countWord: number;
  private readonly unit: number;
  private readonly heatGate: number;
  private readonly graceMs: number;
  private readonly maxSkewMs: number;
  /** The bucket of the previous add: start (ms), relative epoch, lane. Saves a division per event. */
  private cachedStart = NaN;
  private cachedRel = 0;
  private cachedLane = 0;
  /** Receives the values of read-ahead loads so the compiler keeps them. */
  private sink = 0;

  constructor(config: WindowConfig) {
    const l = (this.layout = windowLayout(config));
    this.g = l.granularityMs;
    this.r = l.ring;
    this.stride = l.strideWords;
    this.countWord = l.countWord;
    this.unit = l.unitMs;
    this.heatGate = l.heatGate;
    this.graceMs = l.graceMs;
    this.maxSkewMs = l.maxSkewMs;
    [this.seedA, this.seedB] = fingerprintSeeds(l.seed);
    this.table = new SlotTable(l.strideWords, l.initialCapacity);
    this.wide = new WidePool(l.ring, l.exactLaneCap);
  }

  /** Tracked keys. */
  get size(): number {
    return this.table.size;
  }

  /** Hash-table slots, used and free. */
  get capacity(): number {
    return this.table.capacity;
  }

  /** Keys whose counts live in the wide pool: they outgrew Uint8 lanes, or are exact. */
  get wideKeys(): number {
    return this.wide.size;
  }

  /** Keys recording exact event offsets (WindowConfig.exactFrom). */
  get exactKeys(): number {
    return this.wide.exact.size;
  }

  /** Bytes of typed-array storage held. */
  get byteLength(): number {
    return this.table.byteLength + this.wide.byteLength;
  }

  /** Writes the fingerprint of `key` under this store's seed into out[0], out[1]. */
  fingerprintInto(key: string, out: Uint32Array): void {
    keyFingerprintInto(key, this.seedA, this.seedB, out);
  }

  /**
   * Writes the fingerprint of `prefix + rest` without making that string; the prefix's
   * hash state is kept, so only the rest is hashed.
   */
  fingerprintJoinedInto(prefix: string, rest: string, out: Uint32Array): void {
    let state = this.prefixes.get(prefix);
    if (state === undefined) {
      // Prefixes come from policies; a store living through many policy changes starts over.
      if (this.prefixes.size >= MAX_PREFIXES) this.prefixes.clear();
      state = prefixHash(prefix, this.seedA, this.seedB);
      this.prefixes.set(prefix, state);
    }
    continuedFingerprintInto(state, rest, out);
  }

  /** Convenience over addHashed: fingerprints `key` without allocating. */
  add(key: string, eventTimeMs: number, count: number, nowMs: number): AddResult {
    keyFingerprintInto(key, this.seedA, this.seedB, this.scratch);
    return this.addHashed(this.scratch[0]!, this.scratch[1]!, eventTimeMs, count, nowMs);
  }

  /**
   * Counts `count` events at `eventTimeMs` for the key fingerprinted (h1, h2), in the
   * bucket of that time; `nowMs` is the caller's watermark. Events before now - graceMs,
   * or older than the key's ring holds, are not counted (ADD_LATE). Events after
   * now + maxSkewMs are counted at now + maxSkewMs (ADD_CLAMPED), not dropped: dropping
   * them would let an edge with a fast clock hide traffic.
   */
  addHashed(h1: number, h2: number, eventTimeMs: number, count: number, nowMs: number): AddResult {
    if (count >>> 0 !== count || !(Math.abs(eventTimeMs) < 1e15 && Math.abs(nowMs) < 1e15)) {
      throw new BanstreamError('WINDOW_INVALID_ARGUMENT', 'count must be a whole number in [0, 2^32), times finite ms', {
        details: { count, eventTimeMs, nowMs },
      });
    }
    if (eventTimeMs < nowMs - this.graceMs) return ADD_LATE;
    let status: AddResult = ADD_OK;
    let t = Math.floor(eventTimeMs);
    if (t > nowMs + this.maxSkewMs) {
      t = Math.floor(nowMs + this.maxSkewMs);
      status = ADD_CLAMPED;
    }
    if (count === 0) return status;
    const g = this.g;
    if (!(t >= this.cachedStart && t < this.cachedStart + g)) {
      if (Number.isNaN(this.origin)) this.origin = Math.floor((nowMs - this.graceMs) / g) - this.r - 1;
      const abs = Math.floor(t / g);
      if (abs - this.origin < 1) return ADD_LATE;
      if (abs - this.origin > EPOCH_LIMIT) this.rebase(abs - this.origin);
      this.cachedStart = abs * g;
      this.cachedRel = abs - this.origin;
      this.cachedLane = this.cachedRel % this.r;
    }
    return this.bump(h1 | 0, h2 | 0, t - this.cachedStart, count) === ADD_LATE ? ADD_LATE : status;
  }

  /**
   * The counting core, once the event's bucket is the cached one: `offset` is its ms
   * within that bucket. Small-integer arguments only, so calls never box a double.
   */
  private bump(h1: number, h2: number, offset: number, count: number): AddResult {
    const rel = this.cachedRel;
    const table = this.table;
    const found = table.findOrInsert(h1, h2, rel);
    const words = table.words;
    const base = (found < 0 ? -found - 1 : found) * this.stride;
    if (found >= 0) {
      const ep = words[base + W_EPOCH]! & EPOCH_MASK;
      if (rel > ep) advance(words, base, this.layout, this.wide, rel);
      else if (rel <= ep - this.r) return ADD_LATE;
    }
    const k = this.cachedLane;
    let previous: number;
    let wide = words[base + W_EPOCH]! < 0;
    if (!wide) {
      const cw = base + this.countWord + (k >> 2);
      const shift = (k & 3) << 3;
      previous = (words[cw]! >>> shift) & 255;
      if (previous + count <= NARROW_MAX) {
        words[cw]! += count << shift;
      } else {
        const entry = promote(words, base, this.layout, this.wide); // may reallocate the pool
        this.wide.counts[entry * this.r + k] = previous + count;
        wide = true;
      }
    } else {
      const wi = words[base + this.countWord]! * this.r + k;
      previous = this.wide.counts[wi]!;
      this.wide.counts[wi] = previous + count;
    }
    const at = this.unit === 1 ? offset : Math.floor(offset / this.unit);
    recordSpan(words, base, this.layout, k, previous, count, at);
    // Cold keys stop at this comparison: only wide keys and busy lanes look further.
    if (wide || previous + count >= this.heatGate) exactEvent(words, base, this.layout, this.wide, k, offset, count, previous + count);
    return ADD_OK;
  }

  /**
   * Adds a batch: event i is key (h1s[i], h2s[i]) at timesMs[i], counts[i] events (1
   * without `counts`). It first reads the slots of each group of 16 events, so their
   * cache misses overlap instead of queueing one behind another: at a million keys the
   * table is far larger than the caches. Writes each AddResult to statuses[i] when
   * given; returns the number of late events.
   */
  addBatchHashed(h1s: ArrayLike<number>, h2s: ArrayLike<number>, timesMs: ArrayLike<number>, counts: ArrayLike<number> | undefined, nowMs: number, statuses?: Uint8Array): number {
    const n = h1s.length;
    if (h2s.length !== n || timesMs.length !== n || (counts !== undefined && counts.length !== n) || (statuses !== undefined && statuses.length < n)) {
      throw new BanstreamError('WINDOW_INVALID_ARGUMENT', 'batch arrays must have the same length', { details: { length: n } });
    }
    let late = 0;
    let sink = 0;
    const lowest = nowMs - this.graceMs;
    const highest = nowMs + this.maxSkewMs;
    for (let from = 0; from < n; from += PREFETCH_GROUP) {
      const to = Math.min(n, from + PREFETCH_GROUP);
      const table = this.table;
      // Both ends of each slot: a 40-byte slot straddles two cache lines half the time.
      for (let i = from; i < to; i++) {
        const base = table.home(h1s[i]!) * this.stride;
        sink ^= table.words[base + W_EPOCH]! ^ table.words[base + this.stride - 1]!;
      }
      for (let i = from; i < to; i++) {
        const t = Math.floor(timesMs[i]!);
        const count = counts === undefined ? 1 : counts[i]!;
        // Fast path: an ordinary event in the cached bucket goes straight to the core.
        const ordinary = t >= lowest && t <= highest && t >= this.cachedStart && t < this.cachedStart + this.g && count >>> 0 === count && count > 0;
        const status = ordinary ? this.bump(h1s[i]! | 0, h2s[i]! | 0, t - this.cachedStart, count) : this.addHashed(h1s[i]!, h2s[i]!, timesMs[i]!, count, nowMs);
        if (status === ADD_LATE) late++;
        if (statuses !== undefined) statuses[i] = status;
      }
    }
    this.sink ^= sink;
    return late;
  }

  /** Convenience over estimateHashed. */
  estimate(key: string, atMs: number): number {
    keyFingerprintInto(key, this.seedA, this.seedB, this.scratch);
    return this.estimateHashed(this.scratch[0]!, this.scratch[1]!, atMs);
  }

  /**
   * Estimated events in (atMs - W, atMs], never negative. Meant for atMs at or after the
   * key's newest event: the bucket holding atMs counts whole.
   */
  estimateHashed(h1: number, h2: number, atMs: number): number {
    return this.sum(h1, h2, atMs, false);
  }

  /** Convenience over upperBoundHashed. */
  upperBound(key: string, atMs: number): number {
    keyFingerprintInto(key, this.seedA, this.seedB, this.scratch);
    return this.upperBoundHashed(this.scratch[0]!, this.scratch[1]!, atMs);
  }

  /**
   * Like estimateHashed, but the partly expired bucket counts every event that may still
   * be inside (all but its first while the window start is within its span): never below
   * the exact count when spans are whole ms (G ≤ 16 384 ms). For limits that must not be
   * gamed by timing within a bucket, at the price of denying early near the limit.
   */
  upperBoundHashed(h1: number, h2: number, atMs: number): number {
    return this.sum(h1, h2, atMs, true);
  }

  /**
   * The times of the key's first and last events in the window (atMs - W, atMs], into
   * out[0] and out[1]; false when it has none there. Exact to the store's unit (1 ms
   * whenever G ≤ 16 384 ms), except that the oldest bucket, partly expired, keeps only
   * the span of its events: when that span straddles the window's start, the start is
   * given as the first (the first event is at or after it). For a ban's evidence, read
   * once at the crossing: nothing per event.
   */
  eventSpanHashed(h1: number, h2: number, atMs: number, out: Float64Array): boolean {
    const slot = this.table.find(h1 | 0, h2 | 0);
    if (slot < 0) return false;
    const words = this.table.words;
    const base = slot * this.stride;
    const at = Math.floor(atMs);
    const windowStart = at - this.layout.windowMs + 1;
    const c = Math.floor(at / this.g) - this.origin;
    const ep = words[base + W_EPOCH]! & EPOCH_MASK;
    let first = NaN;
    let last = NaN;
    for (let e = Math.max(c - this.layout.buckets, ep - this.r + 1, 1); e <= Math.min(c, ep); e++) {
      const k = e % this.r;
      if (countAt(words, base, this.layout, this.wide, k) === 0) continue;
      const span = words[base + W_SPAN + k]!;
      const start = (e + this.origin) * this.g;
      const to = Math.min(at, start + ((span >>> SPAN_BITS) & SPAN_MASK) * this.unit);
      if (to < windowStart) continue;
      if (Number.isNaN(first)) first = Math.max(windowStart, start + (span & SPAN_MASK) * this.unit);
      last = to;
    }
    if (Number.isNaN(first)) return false;
    out[0] = first;
    out[1] = last;
    return true;
  }

  has(key: string): boolean {
    keyFingerprintInto(key, this.seedA, this.seedB, this.scratch);
    return this.hasHashed(this.scratch[0]!, this.scratch[1]!);
  }

  hasHashed(h1: number, h2: number): boolean {
    return this.table.find(h1 | 0, h2 | 0) >= 0;
  }

  /** Forgets a key; true if it was tracked. */
  delete(key: string): boolean {
    keyFingerprintInto(key, this.seedA, this.seedB, this.scratch);
    return this.deleteHashed(this.scratch[0]!, this.scratch[1]!);
  }

  deleteHashed(h1: number, h2: number): boolean {
    const slot = this.table.find(h1 | 0, h2 | 0);
    if (slot < 0) return false;
    removeSlot(this.table, this.wide, this.layout, slot);
    return true;
  }

  /**
   * Incremental sweep: looks at up to `maxSlots` slots from where the previous call
   * stopped and removes the keys whose newest bucket ended before nowMs - graceMs - W,
   * which no window an accepted event can still reach will see. Returns how many it
   * removed; shrinks the table once it is mostly empty.
   */
  evictIdle(nowMs: number, maxSlots: number = this.table.capacity): number {
    if (Number.isNaN(this.origin)) return 0;
    const l = this.layout;
    const idleBelow = Math.floor((nowMs - l.graceMs - l.windowMs + 1) / this.g) - this.origin;
    return sweepIdle(this.table, this.wide, l, this.sweep, idleBelow, maxSlots);
  }

  private sum(h1: number, h2: number, atMs: number, upper: boolean): number {
    const table = this.table;
    const slot = table.find(h1 | 0, h2 | 0);
    if (slot < 0) return 0;
    const at = Math.floor(atMs);
    const c = Math.floor(at / this.g) - this.origin;
    const start = at - this.layout.windowMs + 1 - (c - this.layout.buckets + this.origin) * this.g;
    return windowSum(table.words, slot * this.stride, this.layout, this.wide, c, start, upper);
  }

  /** Moves the origin so `rel` is small again; keys too old for any window are dropped. */
  private rebase(rel: number): void {
    const l = this.layout;
    const delta = rel - (this.r + Math.ceil((l.graceMs + l.windowMs) / this.g) + 2);
    this.table = rebased(this.table, this.wide, l, delta);
    this.origin += delta;
    this.cachedStart = NaN;
    this.sweep.slot = 0;
  }
}
