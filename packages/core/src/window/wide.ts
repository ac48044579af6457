/**
 * Counts for the few keys whose bucket count outgrows a Uint8 lane (hot subjects,
 * floods, pre-aggregated counts). A wide entry is R Float64 counts: exact up to 2^53,
 * so saturation is a non-issue in practice, and no count information is lost on
 * promotion. Entries are recycled through a free list when their key is removed.
 */
export class WidePool {
  readonly ring: number;
  counts: Float64Array;
  private readonly free: number[] = [];
  private highWater = 0;

  constructor(ring: number, initialEntries = 16) {
    this.ring = ring;
    this.counts = new Float64Array(ring * initialEntries);
  }

  /** Entries in use. */
  get size(): number {
    return this.highWater - this.free.length;
  }

  get byteLength(): number {
    return this.counts.byteLength;
  }

  /** Index of a zeroed entry. */
  alloc(): number {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    const index = this.highWater++;
    if (this.highWater * this.ring > this.counts.length) {
      const grown = new Float64Array(this.counts.length * 2);
      grown.set(this.counts);
      this.counts = grown;
    }
    return index;
  }

  release(index: number): void {
    this.counts.fill(0, index * this.ring, (index + 1) * this.ring);
    this.free.push(index);
  }
}
