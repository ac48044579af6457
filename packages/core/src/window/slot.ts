import { EPOCH_MASK, NARROW_MAX, SHAPE_SHIFT, SPAN_BITS, SPAN_MASK, W_EPOCH, W_SPAN, WIDE_BIT, type WindowLayout } from './config.js';
import { MODELED_WHOLE } from './exact-pool.js';
import type { WidePool } from './wide.js';

/**
 * Operations on one key's bucket ring inside its slot (`base` = first word of the slot).
 * Bucket number e (a relative epoch) lives in lane e % R. A narrow slot keeps its counts
 * as Uint8 lanes packed four to a word; a wide slot (bit 31 of the epoch word) keeps
 * them in the wide pool and the first count word holds the pool entry. An exact key is
 * always wide: its wide entry leads to its recorded offsets (exact-pool.ts).
 */

/** Count in lane k. */
export function countAt(words: Int32Array, base: number, layout: WindowLayout, wide: WidePool, k: number): number {
  if (words[base + W_EPOCH]! < 0) return wide.counts[words[base + layout.countWord]! * layout.ring + k]!;
  return (words[base + layout.countWord + (k >> 2)]! >>> ((k & 3) << 3)) & 255;
}

/** Shape of lane k: mean distance of its events from the last one, in shapeMax-ths of the span. */
export function shapeAt(words: Int32Array, base: number, layout: WindowLayout, k: number): number {
  const lo = layout.shapeLoBits;
  const hi = words[base + W_SPAN + k]! >>> SHAPE_SHIFT;
  if (lo === 0) return hi;
  return (hi << lo) | ((words[base + layout.strideWords - 1]! >>> (layout.shapeLoShift + k * lo)) & ((1 << lo) - 1));
}

/**
 * Records `count` events at unit offset `at` in lane k, which held `previous` events:
 * widens [first, last] and moves the shape to the new mean distance from the last
 * event. The shape is rounded with a dither that depends on the count only
 * (deterministic), so many small moves add up instead of rounding away.
 */
export function recordSpan(words: Int32Array, base: number, layout: WindowLayout, k: number, previous: number, count: number, at: number): void {
  const sw = base + W_SPAN + k;
  const max = layout.shapeMax;
  let f2 = at;
  let l2 = at;
  let q = max >> 1;
  if (previous !== 0) {
    const span = words[sw]!;
    const f = span & SPAN_MASK;
    const l = (span >>> SPAN_BITS) & SPAN_MASK;
    if (f < f2) f2 = f;
    if (l > l2) l2 = l;
    const n = previous + count;
    const total = ((shapeAt(words, base, layout, k) * (l - f)) / max + l2 - l) * previous + (l2 - at) * count;
    const dither = (n * 0.6180339887498949) % 1;
    if (l2 !== f2) q = Math.min(max, Math.floor((total * max) / (n * (l2 - f2)) + dither));
  }
  const lo = layout.shapeLoBits;
  words[sw] = f2 | (l2 << SPAN_BITS) | ((q >>> lo) << SHAPE_SHIFT);
  if (lo !== 0) {
    const lw = base + layout.strideWords - 1;
    const shift = layout.shapeLoShift + k * lo;
    const mask = ((1 << lo) - 1) << shift;
    words[lw] = (words[lw]! & ~mask) | ((q << shift) & mask);
  }
}

/** The spare bits of the last count word that hold low shape bits. */
function shapeLoMask(layout: WindowLayout): number {
  return layout.shapeLoBits === 0 ? 0 : ((1 << (layout.shapeLoBits * layout.ring)) - 1) << layout.shapeLoShift;
}

function clearLane(words: Int32Array, base: number, layout: WindowLayout, wide: WidePool, k: number): void {
  if (words[base + W_EPOCH]! < 0) wide.counts[words[base + layout.countWord]! * layout.ring + k] = 0;
  else words[base + layout.countWord + (k >> 2)]! &= ~(255 << ((k & 3) << 3));
}

/**
 * Makes `rel` the newest bucket: the lanes of the buckets it passes over start from zero
 * (and, for an exact key, record from their start). An exact key whose live count has fallen
 * below half of exactFrom stops recording (the gap stops a key near the threshold from
 * turning exact and cold at every bucket) and goes back to Uint8 lanes if they hold it.
 */
export function advance(words: Int32Array, base: number, layout: WindowLayout, wide: WidePool, rel: number): void {
  const ew = words[base + W_EPOCH]!;
  const ep = ew & EPOCH_MASK;
  const r = layout.ring;
  if (ew >= 0 && rel - ep >= r) {
    // Common for quiet keys: every lane is stale, zero the count words at once.
    for (let w = layout.countWord; w < layout.strideWords; w++) words[base + w] = 0;
  } else {
    const h = ew < 0 ? wide.exactOf[words[base + layout.countWord]!]! - 1 : -1;
    for (let e = Math.max(ep + 1, rel - r + 1); e <= rel; e++) {
      clearLane(words, base, layout, wide, e % r);
      if (h >= 0) wide.exact.resetLane(h, e % r);
    }
    words[base + W_EPOCH] = rel | (ew & WIDE_BIT);
    if (h >= 0 && 2 * liveCount(words, base, layout, wide) < layout.exactFrom) demote(words, base, layout, wide);
    return;
  }
  words[base + W_EPOCH] = rel | (ew & WIDE_BIT);
}

/** Events in every lane of the ring: the enclosing count of any window ending in the newest bucket. */
export function liveCount(words: Int32Array, base: number, layout: WindowLayout, wide: WidePool): number {
  let live = 0;
  for (let k = 0; k < layout.ring; k++) live += countAt(words, base, layout, wide, k);
  return live;
}

/**
 * Makes the key exact: it moves to the wide pool (if not there yet) and starts recording
 * its events' offsets; what each lane holds so far stays modeled by its span and shape
 * as they are now.
 */
export function heat(words: Int32Array, base: number, layout: WindowLayout, wide: WidePool): void {
  const entry = words[base + W_EPOCH]! < 0 ? words[base + layout.countWord]! : promote(words, base, layout, wide);
  const h = wide.heat(entry);
  for (let k = 0; k < layout.ring; k++) {
    const span = words[base + W_SPAN + k]! & ((1 << SHAPE_SHIFT) - 1);
    wide.exact.freeze(h, k, countAt(words, base, layout, wide, k), span, shapeAt(words, base, layout, k));
  }
}

/** Moves the slot's counts from its Uint8 lanes to a new wide entry; returns the entry. */
export function promote(words: Int32Array, base: number, layout: WindowLayout, wide: WidePool): number {
  const r = layout.ring;
  const entry = wide.alloc();
  for (let k = 0; k < r; k++) wide.counts[entry * r + k] = countAt(words, base, layout, wide, k);
  const shapes = words[base + layout.strideWords - 1]! & shapeLoMask(layout);
  for (let w = layout.countWord; w < layout.strideWords; w++) words[base + w] = 0;
  words[base + layout.countWord] = entry;
  words[base + layout.strideWords - 1]! |= shapes;
  words[base + W_EPOCH]! |= WIDE_BIT;
  return entry;
}

/**
 * After an event of `count` at `offset` ms in lane k (now holding laneCount) of a wide
 * key or a busy lane: records it if the key is exact, else makes the key exact once its
 * live count reaches exactFrom.
 */
export function exactEvent(words: Int32Array, base: number, layout: WindowLayout, wide: WidePool, k: number, offset: number, count: number, laneCount: number): void {
  const h = words[base + W_EPOCH]! < 0 ? wide.exactOf[words[base + layout.countWord]!]! - 1 : -1;
  if (h >= 0) wide.exact.record(h, k, layout.exactUnitMs === 1 ? offset : Math.floor(offset / layout.exactUnitMs), count);
  else if (laneCount >= layout.heatGate && liveCount(words, base, layout, wide) >= layout.exactFrom) heat(words, base, layout, wide);
}

/** Stops a wide key's recording; back to Uint8 lanes when every count fits one. */
function demote(words: Int32Array, base: number, layout: WindowLayout, wide: WidePool): void {
  const entry = words[base + layout.countWord]!;
  wide.cool(entry);
  const r = layout.ring;
  for (let k = 0; k < r; k++) if (wide.counts[entry * r + k]! > NARROW_MAX) return;
  const shapes = words[base + layout.strideWords - 1]! & shapeLoMask(layout);
  for (let w = layout.countWord; w < layout.strideWords; w++) words[base + w] = 0;
  words[base + layout.strideWords - 1] = shapes;
  for (let k = 0; k < r; k++) words[base + layout.countWord + (k >> 2)]! |= wide.counts[entry * r + k]! << ((k & 3) << 3);
  wide.release(entry);
  words[base + W_EPOCH]! &= ~WIDE_BIT;
}

/** Returns a wide slot's entry to the pool; call before the slot is removed. */
export function releaseWide(words: Int32Array, base: number, layout: WindowLayout, wide: WidePool): void {
  if (words[base + W_EPOCH]! < 0) wide.release(words[base + layout.countWord]!);
}

/**
 * Events of the slot in the window (at - W, at], where c is at's relative bucket and
 * `start` is the window's first ms as an offset from the start of bucket c - N. The N
 * buckets fully inside count whole; the partly expired oldest one counts by the share
 * of its occupied span [first, last] at or after `start` (modelPart). For an exact key the
 * oldest bucket's recorded offsets count exactly and only the events before recording
 * began are modeled, by the span and shape they had then.
 */
export function windowSum(words: Int32Array, base: number, layout: WindowLayout, wide: WidePool, c: number, start: number, upper: boolean): number {
  const r = layout.ring;
  const n = layout.buckets;
  const ew = words[base + W_EPOCH]!;
  const ep = ew & EPOCH_MASK;
  const hi = c < ep ? c : ep;
  let sum = 0;
  for (let e = Math.max(c - n + 1, ep - n, 1); e <= hi; e++) sum += countAt(words, base, layout, wide, e % r);
  const o = c - n;
  if (o < 1 || o < ep - n || o > ep) return sum;
  const k = o % r;
  const b = countAt(words, base, layout, wide, k);
  const h = ew < 0 ? wide.exactOf[words[base + layout.countWord]!]! - 1 : -1;
  const before = h >= 0 ? wide.exact.before(h, k) : MODELED_WHOLE;
  const span = words[base + W_SPAN + k]!;
  if (before === MODELED_WHOLE) return sum + modelPart(b, span, shapeAt(words, base, layout, k), start, layout, upper);
  // Outside the span of all the lane's events the answer needs no offsets.
  const unit = layout.unitMs;
  if (start <= (span & SPAN_MASK) * unit) return sum + b;
  if (start > ((span >>> SPAN_BITS) & SPAN_MASK) * unit + unit - 1) return sum;
  // Recorded offsets are whole exactUnitMs: the upper bound counts one whose unit reaches start.
  const eu = layout.exactUnitMs;
  const exact = wide.exact.countFrom(h, k, upper ? start - eu + 1 : start - (eu >> 1), eu);
  return sum + exact + modelPart(before, wide.exact.spanWord(h, k), wide.exact.shape(h, k), start, layout, upper);
}

/**
 * How many of b events with this span word and shape are at or after `start` (ms from
 * the bucket start): all of them until `start` passes the first, none after the last;
 * between, the share the shape's model puts there, rounded (counts are whole), but never
 * less than 1 (the last event is inside) nor more than b - 1 (the first is out). With
 * `upper`, b - 1 there: an upper bound that no timing inside a bucket can get under.
 */
export function modelPart(b: number, span: number, shape: number, start: number, layout: WindowLayout, upper: boolean): number {
  if (b === 0) return 0;
  const unit = layout.unitMs;
  const f = (span & SPAN_MASK) * unit;
  const l = ((span >>> SPAN_BITS) & SPAN_MASK) * unit + unit - 1;
  if (start <= f) return b;
  if (start > l) return 0;
  if (upper) return b - 1;
  // The shape rho is the events' mean distance from the last one, as a share of the
  // span: an even spread has 1/2. Model: a share u = 2s·√(2s) (s = min(rho, 1 - rho))
  // spread evenly, s - u/2 at the end rho leans away from, the rest at the end it leans
  // to. Even at rho = 1/2; one early decoy and a late burst (rho → 0) is two points.
  const rho = shape / layout.shapeMax;
  const even = (l - start + 1) / (l - f + 1);
  const s = rho <= 0.5 ? rho : 1 - rho;
  const u = 2 * s * Math.sqrt(2 * s);
  const share = (rho <= 0.5 ? 1 - s - u / 2 : s - u / 2) + u * even;
  const part = Math.round(b * share);
  return part < 1 ? 1 : part > b - 1 ? b - 1 : part;
}
