import { HotPool } from './hot.js';

/**
 * Counts for the few keys whose bucket count outgrows a Uint8 lane (hot subjects,
 * floods, pre-aggregated counts), and for hot keys (WindowConfig.exactFrom), which move
 * here so their slot's count words can point at this entry. A wide entry is R Float64
 * counts: exact up to 2^53, so saturation is a non-issue in practice, and no count
 * information is lost on promotion. Entries are recycled through a free list when their
 * key is removed. A hot key's entry also points at its exact offsets in `hot` (hot.ts).
 */
export class WidePool {
  readonly ring: number;
  counts: Float64Array;
  /** Per entry: 1 + its HotPool entry, or 0 for a key that records no offsets. */
  hotOf: Int32Array;
  readonly hot: HotPool;
  private readonly free: number[] = [];
  private highWater = 0;

  constructor(ring: number, laneCap: number, initialEntries = 16) {
    this.ring = ring;
    this.counts = new Float64Array(ring * initialEntries);
    this.hotOf = new Int32Array(initialEntries);
    this.hot = new HotPool(ring, laneCap);
  }

  /** Entries in use. */
  get size(): number {
    return this.highWater - this.free.length;
  }

  get byteLength(): number {
    return this.counts.byteLength + this.hotOf.byteLength + this.hot.byteLength;
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
      const hotOf = new Int32Array(this.hotOf.length * 2);
      hotOf.set(this.hotOf);
      this.hotOf = hotOf;
    }
    return index;
  }

  release(index: number): void {
    this.cool(index);
    this.counts.fill(0, index * this.ring, (index + 1) * this.ring);
    this.free.push(index);
  }

  /** Starts recording offsets for entry `index`; returns its HotPool entry. */
  heat(index: number): number {
    const h = this.hot.alloc();
    this.hotOf[index] = h + 1;
    return h;
  }

  /** Stops recording offsets for entry `index` and frees them. */
  cool(index: number): void {
    const h = this.hotOf[index]!;
    if (h === 0) return;
    this.hot.release(h - 1);
    this.hotOf[index] = 0;
  }
}
