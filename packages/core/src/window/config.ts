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
  /** Span offsets are stored in this many ms per unit so they fit a Uint16 (1 whenever G ≤ 65 536 ms). */
  readonly unitMs: number;
  /** Offset of the first count word in a slot (bucket k: word countWord + k/4, byte k%4). */
  readonly countWord: number;
  /** Slot size in 32-bit words. */
  readonly strideWords: number;
}

/** Slot words: fingerprint, epoch, then R span words, then the count words. */
export const W_H1 = 0;
export const W_H2 = 1;
export const W_EPOCH = 2;
/** Word 3 + k: bucket k's first-event offset (low 16 bits) and last-event offset (high 16). */
export const W_SPAN = 3;
/** Bit 31 of the epoch word: the counts live in the wide pool, the slot holds its index. */
export const WIDE_BIT = 0x80000000;
export const EPOCH_MASK = 0x7fffffff;
/** Relative epochs above this trigger a rebase (store.ts), so they never reach bit 31. */
export const EPOCH_LIMIT = 2 ** 30;
/** Largest count a Uint8 lane holds; one more promotes the key to the wide pool. */
export const NARROW_MAX = 255;

const MAX_BUCKETS = 64;
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
  if (windowMs % buckets !== 0) {
    throw invalid(`windowMs ${windowMs} is not a multiple of buckets ${buckets}: sub-windows must be whole ms`, { windowMs, buckets });
  }
  const granularityMs = windowMs / buckets;
  const ring = buckets + 1;
  return {
    windowMs, buckets, ring, granularityMs, graceMs, maxSkewMs, seed, initialCapacity,
    unitMs: Math.ceil(granularityMs / 65536),
    countWord: W_SPAN + ring,
    // Four Uint8 counts per word; the first count word doubles as the wide-pool index.
    strideWords: W_SPAN + ring + Math.ceil(ring / 4),
  };
}
