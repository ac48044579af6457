import { BanstreamError } from '../errors.js';

/** One store per window configuration; callers compose the key (policyId + subject). */
export interface WindowConfig {
  /** Window length W in ms. */
  readonly windowMs: number;
  /** Number of sub-window buckets N; the granularity G = W / N must be a whole number of ms. */
  readonly buckets: number;
  /** Events with eventTime < now - graceMs are rejected as late. */
  readonly graceMs: number;
  /** Events with eventTime > now + maxSkewMs are counted at now + maxSkewMs. Default 1000. */
  readonly maxSkewMs?: number;
  /** Seed of the key fingerprint (uint32); use a secret random one in production. Default 0. */
  readonly seed?: number;
  /** Initial hash-table capacity in slots. Default 1024. */
  readonly initialCapacity?: number;
  /**
   * A key whose live count (events in its ring) reaches this many starts recording the
   * exact ms of its events (exact-pool.ts), so its partly expired bucket is counted exactly
   * rather than modeled. Set it from the limits checked against this store: a tenth of
   * the smallest limit. Only the events a key counted before it turned exact are still
   * modeled, and at a tenth of the limit they are too few to move a decision often (on
   * bench/accuracy's traces a fifth left one or two false bans, a tenth none). Default:
   * off (undefined): a store that does not know its limits cannot pick a threshold that
   * is neither useless (above them) nor costly (far below them, most keys are exact: each
   * exact key takes a few hundred bytes beside its slot, up to R × exactLaneCap offsets).
   */
  readonly exactFrom?: number;
}

/** Everything derived from a config once: time constants and the slot layout. */
export interface WindowLayout {
  readonly windowMs: number;
  /** N */
  readonly buckets: number;
  /** R = N + 1 buckets in each key's ring: a window straddles N + 1 buckets. */
  readonly ring: number;
  /** G */
  readonly granularityMs: number;
  readonly graceMs: number;
  readonly maxSkewMs: number;
  readonly seed: number;
  readonly initialCapacity: number;
  /** Span offsets are stored in this many ms per unit so they fit SPAN_BITS (1 whenever G ≤ 16 384 ms). */
  readonly unitMs: number;
  /** Offset of the first count word in a slot (bucket k: word countWord + k/4, byte k%4). */
  readonly countWord: number;
  /** Slot size in 32-bit words. */
  readonly strideWords: number;
  /** Low shape bits per bucket kept in the spare bytes of the last count word (0 to 4). */
  readonly shapeLoBits: number;
  /** Bit of that word where bucket 0's low shape bits start. */
  readonly shapeLoShift: number;
  /** Largest shape: the shape is the events' mean distance from the last one in shapeMax-ths of the span. */
  readonly shapeMax: number;
  /** WindowConfig.exactFrom; Infinity when off. */
  readonly exactFrom: number;
  /**
   * An exact key's lane records at most this many offsets (16 × exactFrom, in [256, 8192]);
   * one more and the lane goes back to the span model. With exactFrom a tenth of the
   * smallest limit, a lane that full holds 1.6 limits' worth in one bucket: the key is
   * far over that limit, with nothing near it left to decide. It bounds an exact key's
   * memory (R × 2 bytes × the cap) and the scan that counts a lane.
   */
  readonly exactLaneCap: number;
  /** Recorded offsets are Uint16 in units of this many ms (1 whenever G ≤ 65 536 ms). */
  readonly exactUnitMs: number;
  /**
   * A narrow key's live count is summed (to see whether it is exact) only once the lane
   * taking the event holds this many: cold keys pay one comparison. 2^30 when off.
   */
  readonly heatGate: number;
}

/** Slot words: fingerprint, epoch, then R span words, then the count words. */
export const W_H1 = 0;
export const W_H2 = 1;
export const W_EPOCH = 2;
/**
 * Word 3 + k: bucket k's first-event offset (bits 0–12), last-event offset (bits 13–25)
 * and shape (bits 26–31): where the events' mean sits in [first, last], from the last
 * end, in 1/SHAPE_MAX steps (SHAPE_MAX / 2 = the middle, as an even spread has it).
 */
export const W_SPAN = 3;
export const SPAN_BITS = 14;
export const SPAN_MASK = (1 << SPAN_BITS) - 1;
export const SHAPE_SHIFT = 2 * SPAN_BITS;
export const SHAPE_MAX = 14;
/** Bit 31 of the epoch word: the counts live in the wide pool, the slot holds its index. */
export const WIDE_BIT = 0x80000000;
export const EPOCH_MASK = 0x7fffffff;
/** Relative epochs above this trigger a rebase (store.ts), so they never reach bit 31. */
export const EPOCH_LIMIT = 2 ** 30;
/** Largest count a Uint8 lane holds; one more promotes the key to the wide pool. */
export const NARROW_MAX = 255;

const MAX_BUCKETS = 64;
const MIN_LANE_CAP = 256;
const MAX_LANE_CAP = 8192;
const MAX_WINDOW_MS = 2 ** 40;

function invalid(message: string, details: Record<string, unknown>): BanstreamError {
  return new BanstreamError('CONFIG_INVALID', message, { details });
}

function wholeAtLeast(name: string, value: unknown, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(`window ${name} must be a whole number in [${min}, ${max}], got ${String(value)}`, { [name]: value });
  }
  return value;
}

/** Validates a config and derives the layout; throws CONFIG_INVALID with the offending field. */
export function windowLayout(config: WindowConfig): WindowLayout {
  const windowMs = wholeAtLeast('windowMs', config.windowMs, 1, MAX_WINDOW_MS);
  const buckets = wholeAtLeast('buckets', config.buckets, 1, MAX_BUCKETS);
  const graceMs = wholeAtLeast('graceMs', config.graceMs, 0, MAX_WINDOW_MS);
  const maxSkewMs = wholeAtLeast('maxSkewMs', config.maxSkewMs ?? 1000, 0, MAX_WINDOW_MS);
  const seed = wholeAtLeast('seed', config.seed ?? 0, 0, 0xffffffff);
  const initialCapacity = wholeAtLeast('initialCapacity', config.initialCapacity ?? 1024, 8, 2 ** 26);
  const exactFrom = config.exactFrom === undefined ? Infinity : wholeAtLeast('exactFrom', config.exactFrom, 1, 2 ** 30);
  if (windowMs % buckets !== 0) {
    throw invalid(`windowMs ${windowMs} is not a multiple of buckets ${buckets}: sub-windows must be whole ms`, { windowMs, buckets });
  }
  const granularityMs = windowMs / buckets;
  const ring = buckets + 1;
  const countWords = Math.ceil(ring / 4);
  // Spare bytes after the last count, when that word is not also the wide-pool index.
  const shapeLoShift = 8 * (ring - 4 * (countWords - 1));
  const shapeLoBits = countWords < 2 ? 0 : Math.min(4, Math.floor((32 - shapeLoShift) / ring));
  return {
    windowMs,
    buckets,
    ring,
    granularityMs,
    graceMs,
    maxSkewMs,
    seed,
    initialCapacity,
    unitMs: Math.ceil(granularityMs / 2 ** SPAN_BITS),
    countWord: W_SPAN + ring,
    // Four Uint8 counts per word; the first count word doubles as the wide-pool index.
    strideWords: W_SPAN + ring + countWords,
    shapeLoBits,
    shapeLoShift,
    shapeMax: 2 ** (4 + shapeLoBits) - 2,
    exactFrom,
    exactLaneCap: exactFrom === Infinity ? 0 : Math.min(MAX_LANE_CAP, Math.max(MIN_LANE_CAP, 16 * exactFrom)),
    exactUnitMs: Math.ceil(granularityMs / 2 ** 16),
    // Some lane holds at least live / R; half that, so a key is caught a little early.
    heatGate: exactFrom === Infinity ? 2 ** 30 : Math.max(1, Math.ceil(exactFrom / (2 * ring))),
  };
}
