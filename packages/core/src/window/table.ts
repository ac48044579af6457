import { BanstreamError } from '../errors.js';
import { W_EPOCH, W_H1, W_H2 } from './config.js';

/**
 * Open-addressing hash table of fixed-size slots in one ArrayBuffer, keyed by a 64-bit
 * fingerprint (h1, h2). It knows the three header words of a slot and nothing of the
 * payload: an epoch word of 0 marks an empty slot, so a live slot's epoch is never 0.
 *
 * - Home slot = floor(h1 × capacity / 2^32) ("fastrange"): any capacity works, not only
 *   powers of two, which lets the table grow by 1.3× instead of 2× and keeps the
 *   bytes per key inside the budget at every size.
 * - Linear probing: a probe run is contiguous memory, so after the first cache miss the
 *   next slots are usually in the same or the prefetched line.
 * - Deletion by backward shift: later members of the run move back into the hole, so
 *   there are no tombstones and lookups never slow down after churn.
 */

/** Grow past this load: at 0.85 a successful lookup averages under 4 probes, a miss about 22. */
export const MAX_LOAD = 0.85;
/** Growth factor: right after a growth the load is 0.85 / 1.3 ≈ 0.65, the worst case for memory. */
export const GROWTH = 1.3;
/** At most 2^26 slots, and at most 2^31 words: typed arrays have a length limit. */
export function maxCapacity(strideWords: number): number {
  return Math.min(2 ** 26, Math.floor(2 ** 31 / strideWords));
}

const TWO_32 = 4294967296;

export class SlotTable {
  readonly strideWords: number;
  readonly maxCapacity: number;
  capacity: number;
  size = 0;
  /** Int32 so fingerprints and epochs compare as small integers on the hot path. */
  words: Int32Array;
  private growAt: number;

  constructor(strideWords: number, capacity: number) {
    this.strideWords = strideWords;
    this.maxCapacity = maxCapacity(strideWords);
    this.capacity = Math.min(capacity, this.maxCapacity);
    this.words = new Int32Array(this.capacity * strideWords);
    this.growAt = Math.floor(this.capacity * MAX_LOAD);
  }

  /** Bytes held by the slot array (the whole cost of the table). */
  get byteLength(): number {
    return this.words.byteLength;
  }

  /** h1 as int32 or uint32; the high bits pick the slot. */
  home(h1: number): number {
    return (((h1 >>> 0) * this.capacity) / TWO_32) >>> 0;
  }

  /** Slot index holding (h1, h2) (both int32, i.e. `x | 0`), or -1. */
  find(h1: number, h2: number): number {
    const w = this.words;
    const s = this.strideWords;
    const cap = this.capacity;
    let i = this.home(h1);
    for (;;) {
      const base = i * s;
      if (w[base + W_EPOCH] === 0) return -1;
      if (w[base + W_H1] === h1 && w[base + W_H2] === h2) return i;
      i = i + 1 === cap ? 0 : i + 1;
    }
  }

  /**
   * Slot index of (h1, h2) if present; otherwise claims an empty, zeroed slot, writes the
   * fingerprint and `epochWord` (non-zero) and returns -(index + 1).
   */
  findOrInsert(h1: number, h2: number, epochWord: number): number {
    let w = this.words;
    const s = this.strideWords;
    let i = this.home(h1);
    for (;;) {
      const base = i * s;
      if (w[base + W_EPOCH] === 0) break;
      if (w[base + W_H1] === h1 && w[base + W_H2] === h2) return i;
      i = i + 1 === this.capacity ? 0 : i + 1;
    }
    if (this.size + 1 > this.growAt) {
      this.resize(Math.ceil(this.capacity * GROWTH));
      w = this.words;
      i = this.emptySlotFor(h1);
    }
    const base = i * s;
    w[base + W_H1] = h1;
    w[base + W_H2] = h2;
    w[base + W_EPOCH] = epochWord;
    this.size++;
    return -(i + 1);
  }

  /** Removes slot i and closes the gap by shifting later members of its probe run back. */
  removeAt(i: number): void {
    const w = this.words;
    const s = this.strideWords;
    const cap = this.capacity;
    let hole = i;
    let j = i;
    for (;;) {
      j = j + 1 === cap ? 0 : j + 1;
      const jb = j * s;
      if (w[jb + W_EPOCH] === 0) break;
      const k = this.home(w[jb + W_H1]!);
      // Slot j may move into the hole only if its home is not cyclically inside (hole, j].
      const stays = hole <= j ? hole < k && k <= j : hole < k || k <= j;
      if (stays) continue;
      w.copyWithin(hole * s, jb, jb + s);
      hole = j;
    }
    w.fill(0, hole * s, hole * s + s);
    this.size--;
  }

  /** Rehashes every live slot into a table of about `requested` slots (never too small for its keys). */
  resize(requested: number): void {
    const capacity = Math.max(Math.min(requested, this.maxCapacity), Math.ceil((this.size + 1) / MAX_LOAD));
    if (capacity > this.maxCapacity) {
      throw new BanstreamError('WINDOW_CAPACITY_EXCEEDED', `window store is full at ${this.size} keys`, { details: { size: this.size } });
    }
    const old = this.words;
    const oldCap = this.capacity;
    const s = this.strideWords;
    this.capacity = capacity;
    this.words = new Int32Array(capacity * s);
    this.growAt = Math.floor(capacity * MAX_LOAD);
    const w = this.words;
    for (let i = 0; i < oldCap; i++) {
      const ob = i * s;
      if (old[ob + W_EPOCH] === 0) continue;
      const nb = this.emptySlotFor(old[ob + W_H1]!) * s;
      for (let k = 0; k < s; k++) w[nb + k] = old[ob + k]!;
    }
  }

  private emptySlotFor(h1: number): number {
    const w = this.words;
    const s = this.strideWords;
    let i = this.home(h1);
    while (w[i * s + W_EPOCH] !== 0) i = i + 1 === this.capacity ? 0 : i + 1;
    return i;
  }
}
