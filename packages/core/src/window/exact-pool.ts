/**
 * Exact event offsets for exact keys (WindowConfig.exactFrom): the side pool that lets the
 * partly expired oldest bucket of a key near a limit be counted exactly instead of
 * through its span and shape. Only exact keys have an entry (found through their wide
 * entry, wide.ts), so cold keys pay nothing here.
 *
 * An entry is R lanes, one per ring lane. A lane records the ms offset (in exactUnitMs)
 * of every event counted in it since recording began, as sorted Uint16s in one segment
 * of a pooled array. Sorted, so "offsets at or after the window start" is a binary
 * search over a few cache lines, which matters because it runs for every estimate of a
 * exact key (a chain of chunks cost a cache miss per chunk). Events mostly come in time
 * order and append; a late one shifts the few later offsets up. A full segment moves to
 * one twice its size; segments are 8 · 2^c offsets and freed ones are reused by size.
 *
 * Events counted before the key turned exact are not recorded: the lane keeps their number
 * and the span and shape they had then (frozen), and models them as the slot would. A
 * lane whose bucket starts while the key is exact records everything, so it is exact.
 * A lane that would record more than exactLaneCap offsets frees its segment and is
 * modeled whole by the slot's span and shape again (MODELED_WHOLE), which the slot keeps
 * up to date for every event, exact or not.
 *
 * Everything is typed arrays with free lists; no objects per key or event.
 */

/** Smallest segment, in offsets: 16 bytes, and room for a free-list link (two Uint16s). */
const MIN_SEGMENT = 8;
/** Segment size classes: 8 · 2^c offsets up to 8 · 2^15, past any exactLaneCap. */
const CLASSES = 16;
/** Lane words: events counted before recording began (or MODELED_WHOLE); ... */
const L_BEFORE = 0;
/** ... offsets recorded; ... */
const L_RECORDED = 1;
/** ... where its segment starts in `offsets`; ... */
const L_AT = 2;
/** ... the segment's size in offsets, 0 for none; ... */
const L_SIZE = 3;
/** ... the frozen span word of the events before: first | last << SPAN_BITS, in unitMs; ... */
const L_SPAN = 4;
/** ... and their frozen shape. */
const L_SHAPE = 5;
const LANE_WORDS = 6;
/** L_BEFORE of a lane that overflowed (or was too full when the key turned exact). */
export const MODELED_WHOLE = -1;

export class ExactPool {
  readonly ring: number;
  readonly laneCap: number;
  /** R × LANE_WORDS words per entry. */
  meta: Int32Array = new Int32Array(0);
  offsets: Uint16Array = new Uint16Array(0);
  /** Offsets handed out so far; segments beyond it were never used. */
  private top = 0;
  /** Per size class, 1 + the first free segment (0: none); a free segment's first two offsets link to the next. */
  private readonly freeSegments = new Float64Array(CLASSES);
  private readonly freeEntries: number[] = [];
  private entryHigh = 0;

  constructor(ring: number, laneCap: number) {
    this.ring = ring;
    this.laneCap = laneCap;
  }

  /** Entries in use: the exact keys. */
  get size(): number {
    return this.entryHigh - this.freeEntries.length;
  }

  get byteLength(): number {
    return this.meta.byteLength + this.offsets.byteLength;
  }

  /** A new entry, every lane empty and recording. */
  alloc(): number {
    let entry = this.freeEntries.pop();
    if (entry === undefined) {
      entry = this.entryHigh++;
      const words = this.ring * LANE_WORDS;
      if (this.entryHigh * words > this.meta.length) this.meta = grownInt32(this.meta, Math.max(16 * words, this.meta.length * 2));
    }
    for (let k = 0; k < this.ring; k++) this.clear(entry, k, 0);
    return entry;
  }

  release(entry: number): void {
    for (let k = 0; k < this.ring; k++) this.clear(entry, k, 0);
    this.freeEntries.push(entry);
  }

  /**
   * Lane k holds `before` events that are not recorded, with this span word and shape;
   * later events are recorded. More than laneCap before: the lane is modeled whole.
   */
  freeze(entry: number, k: number, before: number, span: number, shape: number): void {
    const whole = before > this.laneCap || before === MODELED_WHOLE;
    const at = this.clear(entry, k, whole ? MODELED_WHOLE : before);
    // Only a lane with modeled events has a span: the others keep zeros.
    if (whole || before === 0) return;
    this.meta[at + L_SPAN] = span;
    this.meta[at + L_SHAPE] = shape;
  }

  /** Lane k starts a new bucket: empty and recording. */
  resetLane(entry: number, k: number): void {
    this.clear(entry, k, 0);
  }

  /** Events counted before recording began in lane k, or MODELED_WHOLE. */
  before(entry: number, k: number): number {
    return this.meta[(entry * this.ring + k) * LANE_WORDS + L_BEFORE]!;
  }

  spanWord(entry: number, k: number): number {
    return this.meta[(entry * this.ring + k) * LANE_WORDS + L_SPAN]!;
  }

  shape(entry: number, k: number): number {
    return this.meta[(entry * this.ring + k) * LANE_WORDS + L_SHAPE]!;
  }

  recorded(entry: number, k: number): number {
    return this.meta[(entry * this.ring + k) * LANE_WORDS + L_RECORDED]!;
  }

  /** Records `count` events at `offset` (exactUnitMs) in lane k; past the cap the lane is modeled whole. */
  record(entry: number, k: number, offset: number, count: number): void {
    const lane = (entry * this.ring + k) * LANE_WORDS;
    const m = this.meta;
    if (m[lane + L_BEFORE]! === MODELED_WHOLE) return;
    const n = m[lane + L_RECORDED]!;
    if (n + count > this.laneCap) {
      this.clear(entry, k, MODELED_WHOLE);
      return;
    }
    let at = m[lane + L_AT]!;
    const size = m[lane + L_SIZE]!;
    if (n + count > size) {
      let bigger = size === 0 ? MIN_SEGMENT : 2 * size;
      while (bigger < n + count) bigger *= 2;
      const moved = this.segment(bigger); // may reallocate `offsets`
      this.offsets.copyWithin(moved, at, at + n);
      if (size !== 0) this.freeSegment(at, size);
      at = moved;
      m[lane + L_AT] = at;
      m[lane + L_SIZE] = bigger;
    }
    const o = this.offsets;
    let i = at + n;
    if (n > 0 && o[i - 1]! > offset) {
      // A late event: after every offset at or before it, the later ones move up.
      i = firstAbove(o, at, at + n, offset);
      o.copyWithin(i + count, i, at + n);
    }
    for (let j = i; j < i + count; j++) o[j] = offset;
    m[lane + L_RECORDED] = n + count;
  }

  /** Recorded offsets o in lane k with o × unit ≥ from. */
  countFrom(entry: number, k: number, from: number, unit: number): number {
    const lane = (entry * this.ring + k) * LANE_WORDS;
    const n = this.meta[lane + L_RECORDED]!;
    if (n === 0) return 0;
    const at = this.meta[lane + L_AT]!;
    // Offsets are whole units: o × unit ≥ from ⇔ o > ⌈from / unit⌉ - 1.
    return at + n - firstAbove(this.offsets, at, at + n, Math.ceil(from / unit) - 1);
  }

  /** Copies lane k's recorded offsets (ascending) into out from index `to`; returns how many. */
  copyOffsets(entry: number, k: number, out: Uint16Array, to: number): number {
    const lane = (entry * this.ring + k) * LANE_WORDS;
    const n = this.meta[lane + L_RECORDED]!;
    const at = this.meta[lane + L_AT]!;
    out.set(this.offsets.subarray(at, at + n), to);
    return n;
  }

  /** Frees lane k's segment and sets its `before`; returns the lane's first meta word. */
  private clear(entry: number, k: number, before: number): number {
    const lane = (entry * this.ring + k) * LANE_WORDS;
    const m = this.meta;
    if (m[lane + L_SIZE]! !== 0) this.freeSegment(m[lane + L_AT]!, m[lane + L_SIZE]!);
    for (let w = lane; w < lane + LANE_WORDS; w++) m[w] = 0;
    m[lane + L_BEFORE] = before;
    return lane;
  }

  /** Start of a segment of `size` offsets (8 · 2^c). */
  private segment(size: number): number {
    const c = sizeClass(size);
    const head = this.freeSegments[c]!;
    if (head !== 0) {
      const at = head - 1;
      this.freeSegments[c] = this.offsets[at]! + this.offsets[at + 1]! * 65536;
      return at;
    }
    const at = this.top;
    this.top += size;
    if (this.top > this.offsets.length) {
      const grown = new Uint16Array(Math.max(4096, 2 * this.offsets.length, this.top));
      grown.set(this.offsets);
      this.offsets = grown;
    }
    return at;
  }

  private freeSegment(at: number, size: number): void {
    const c = sizeClass(size);
    const next = this.freeSegments[c]!;
    this.offsets[at] = next % 65536;
    this.offsets[at + 1] = Math.floor(next / 65536);
    this.freeSegments[c] = at + 1;
  }
}

function sizeClass(size: number): number {
  return 31 - Math.clz32(size / MIN_SEGMENT);
}

/** First index in [from, to) of the ascending `o` whose value exceeds `value`; `to` if none. */
function firstAbove(o: Uint16Array, from: number, to: number, value: number): number {
  let lo = from;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (o[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function grownInt32(array: Int32Array, length: number): Int32Array {
  const bigger = new Int32Array(length);
  bigger.set(array);
  return bigger;
}
