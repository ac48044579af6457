/**
 * A sorted list of distinct items in chunks of at most `maxChunk` (the layout of Python's
 * sortedcontainers): an insert or delete is two binary searches and a splice of one
 * chunk, a position is found by binary search, and iterating on from a position costs
 * nothing per item skipped. A rank (how many items sort below a position) adds up the
 * chunks' lengths: a few thousand additions at a million items.
 */

/** Monotone over the list: true for a leading run of items, false for the rest. */
export type Below<T> = (item: T) => boolean;

interface Position {
  chunk: number;
  index: number;
}

export class SortedList<T> {
  private chunks: T[][] = [];
  private count = 0;

  constructor(
    private readonly compare: (a: T, b: T) => number,
    /** Tests make it small, so a few hundred items cross many chunks. */
    private readonly maxChunk = 1024,
  ) {
    if (!Number.isInteger(maxChunk) || maxChunk < 2) throw new RangeError(`maxChunk: an integer from 2 (got ${maxChunk})`);
  }

  get size(): number {
    return this.count;
  }

  /** False (and nothing changes) when an equal item is held. */
  add(item: T): boolean {
    if (this.chunks.length === 0) {
      this.chunks.push([item]);
      this.count = 1;
      return true;
    }
    let chunk = this.chunkOf(item);
    let index: number;
    if (chunk === this.chunks.length) {
      chunk--;
      index = this.chunks[chunk]!.length;
    } else {
      index = this.indexIn(this.chunks[chunk]!, item);
      if (this.compare(this.chunks[chunk]![index]!, item) === 0) return false;
    }
    const target = this.chunks[chunk]!;
    target.splice(index, 0, item);
    this.count++;
    if (target.length > this.maxChunk) this.chunks.splice(chunk + 1, 0, target.splice(target.length >>> 1));
    return true;
  }

  /** Removes the item equal to `item`; false when none is held. */
  delete(item: T): boolean {
    const chunk = this.chunkOf(item);
    const target = this.chunks[chunk];
    if (target === undefined) return false;
    const index = this.indexIn(target, item);
    if (this.compare(target[index]!, item) !== 0) return false;
    target.splice(index, 1);
    this.count--;
    if (target.length === 0) this.chunks.splice(chunk, 1);
    else if (target.length < this.maxChunk >>> 2 && this.chunks.length > 1) this.join(chunk);
    return true;
  }

  /** How many chunks the items are in: at most 4 × size / maxChunk + 1. */
  get chunkCount(): number {
    return this.chunks.length;
  }

  /**
   * Joins a chunk emptied below a quarter to a neighbour (split again if that makes one
   * too long): otherwise deletes that leave one long-lived item per chunk (bans expiring
   * in the order they came, a few renewed) keep a chunk per item, and a rank adds up as
   * many lengths as there are items.
   */
  private join(chunk: number): void {
    const left = chunk > 0 ? chunk - 1 : chunk;
    const joined = this.chunks[left]!;
    for (const item of this.chunks[left + 1]!) joined.push(item);
    this.chunks.splice(left + 1, 1);
    if (joined.length > this.maxChunk) this.chunks.splice(left + 1, 0, joined.splice(joined.length >>> 1));
  }

  // Inserts and deletes compare directly rather than through a `below` closure: a million of them load at start.
  /** The first chunk whose last item is not below `item`; chunks.length when none. */
  private chunkOf(item: T): number {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const items = this.chunks[mid]!;
      if (this.compare(items[items.length - 1]!, item) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** The index of the first item of `items` not below `item`. */
  private indexIn(items: readonly T[], item: T): number {
    let lo = 0;
    let hi = items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.compare(items[mid]!, item) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** How many items `below` holds for. */
  rank(below: Below<T>): number {
    const { chunk, index } = this.locate(below);
    let n = index;
    for (let c = 0; c < chunk; c++) n += this.chunks[c]!.length;
    return n;
  }

  /** The items for which `below` is false, in order, from the first of them. */
  *from(below: Below<T>): Generator<T, void, undefined> {
    let { chunk, index } = this.locate(below);
    for (; chunk < this.chunks.length; chunk++, index = 0) {
      const items = this.chunks[chunk]!;
      for (; index < items.length; index++) yield items[index]!;
    }
  }

  /** The items from the `rank`-th (0 is the first), in order. */
  *fromRank(rank: number): Generator<T, void, undefined> {
    let chunk = 0;
    let index = Math.max(0, rank);
    while (chunk < this.chunks.length && index >= this.chunks[chunk]!.length) index -= this.chunks[chunk++]!.length;
    for (; chunk < this.chunks.length; chunk++, index = 0) {
      const items = this.chunks[chunk]!;
      for (; index < items.length; index++) yield items[index]!;
    }
  }

  /** The first item for which `below` is false: a chunk by its last item, then the item in it. */
  private locate(below: Below<T>): Position {
    let lo = 0;
    let hi = this.chunks.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const items = this.chunks[mid]!;
      if (below(items[items.length - 1]!)) lo = mid + 1;
      else hi = mid;
    }
    if (lo === this.chunks.length) return { chunk: lo, index: 0 };
    const items = this.chunks[lo]!;
    let a = 0;
    let b = items.length;
    while (a < b) {
      const mid = (a + b) >>> 1;
      if (below(items[mid]!)) a = mid + 1;
      else b = mid;
    }
    return { chunk: lo, index: a };
  }
}
