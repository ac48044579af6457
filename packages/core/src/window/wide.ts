import { ExactPool } from './exact-pool.js';

/**
 * Counts for the few keys whose bucket count outgrows a Uint8 lane (busy subjects,
 * floods, pre-aggregated counts), and for exact keys (WindowConfig.exactFrom), which move
 * here so their slot's count words can point at this entry. A wide entry is R Float64
 * counts: exact up to 2^53, so saturation is a non-issue in practice, and no count
 * information is lost on promotion. Entries are recycled through a free list when their
 * key is removed. An exact key's entry also points at its exact offsets in `exact` (exact-pool.ts).
 */
export class WidePool {
  readonly ring: number;
  counts: Float64Array;
  /** Per entry: 1 + its ExactPool entry, or 0 for a key that records no offsets. */
  exactOf: Int32Array;
  readonly exact: ExactPool;
  private readonly free: number[] = [];
  private highWater = 0;

  constructor(ring: number, laneCap: number, initialEntries = 16) {
    this.ring = ring;
    this.counts = new Float64Array(ring * initialEntries);
    this.exactOf = new Int32Array(initialEntries);
    this.exact = new ExactPool(ring, laneCap);
  }

  /** Entries in use. */
  get size(): number {
    return this.highWater - this.free.length;
  }

  get byteLength(): number {
    return this.counts.byteLength + this.exactOf.byteLength + this.exact.byteLength;
  }

  /** Index of a zeroed entry, with no offsets. */
  alloc(): number {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    const index = this.highWater++;
    if (this.highWater * this.ring > this.counts.length) {
      const grown = new Float64Array(this.counts.length * 2);
      grown.set(this.counts);
      this.counts = grown;
      const exactOf = new Int32Array(this.exactOf.length * 2);
      exactOf.set(this.exactOf);
      this.exactOf = exactOf;
    }
    return index;
  }

  release(index: number): void {
    this.cool(index);
    this.counts.fill(0, index * this.ring, (index + 1) * this.ring);
    this.free.push(index);
  }

  /** Starts recording offsets for entry `index`; returns its ExactPool entry. */
  heat(index: number): number {
    const h = this.exact.alloc();
    this.exactOf[index] = h + 1;
    return h;
  }

  /** Stops recording offsets for entry `index` and frees them. */
  cool(index: number): void {
    const h = this.exactOf[index]!;
    if (h === 0) return;
    this.exact.release(h - 1);
    this.exactOf[index] = 0;
  }
}
