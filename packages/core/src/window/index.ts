/**
 * # window/ — sliding-window counting
 *
 * WindowStore (store.ts) counts, per key, over a sliding window of length W built from
 * N sub-window buckets of G = W / N ms. A window (t - W, t] straddles N + 1 buckets, so
 * each key holds a ring of R = N + 1. `estimate` is the Cloudflare two-bucket
 * approximation generalised to N buckets: buckets fully inside the window count whole,
 * the partly expired oldest one counts by the share of it still inside. Each bucket also records the ms offsets of its
 * first and last event, and that share is taken over the span the events occupy
 * ([first, last]) rather than over all of G: a burst counts whole until the window
 * passes its first event and is gone once it passes its last, instead of being smeared
 * over the bucket. That spares periodic near-limit bursts (a cron job, a client pacing
 * itself to the limit) from false bans and stops bursts timed at bucket and window edges.
 * Inside the span, each bucket also keeps its shape: the events' mean distance from the
 * last one, as a share of the span (1/2 for an even spread). The share still inside is
 * taken from a model with that mean: even at 1/2, drifting to mass at the two ends, so
 * one early request followed by a burst at the bucket's end (bench/accuracy.bench.ts,
 * class attacker_span_decoy) counts the burst whole instead of as spread over the bucket.
 * Estimates are rounded to whole events. An adversary can still shape a bucket to look
 * even; where that matters, `upperBound` counts everything that may still be inside and
 * is never below the exact count, at the price of denying some clients near the limit early.
 *
 * Keys are 64-bit fingerprints, never strings (collision odds in hash.ts): callers keep
 * subject text only for their few hot keys. Events count in the bucket of their own
 * time (addHashed says what is late). Pure: no I/O, no clock; times are passed in.
 *
 * ## Slot layout: 4 × (3 + R + ⌈R/4⌉) bytes; 40 bytes for the default N = 4 (R = 5)
 *
 * | words | field |
 * |---|---|
 * | 0     | h1: first half of the key's fingerprint; also picks the home slot |
 * | 1     | h2: second half |
 * | 2     | epoch: relative number of the key's newest bucket; 0 = empty slot; bit 31 = wide |
 * | 3…7   | per bucket: first-event offset (bits 0–13), last-event offset (14–27), ms from the bucket start; high 4 bits of the shape (28–31) |
 * | 8…9   | per bucket: count, Uint8, four to a word (wide: word 8 is the wide-pool entry); word 9 bits 8–27: low 4 bits of each bucket's shape |
 *
 * Why these widths. A Uint8 count covers the common case (a key near a limit of
 * 100/min puts ~25 in a 15 s bucket); one more promotes the key to a Float64 wide entry
 * (wide.ts), so a count never saturates and never loses an event. The spans cost 4
 * bytes per bucket and buy more accuracy than more, finer buckets would for the same
 * bytes: the errors come from bursts and edge-timed traffic, which a span pins to the
 * ms (14 bits: whole ms while G ≤ 16 384 ms, coarser units beyond). The 8-bit shape
 * lives in the span word's top bits and the count words' spare bytes; layouts with
 * fewer spare bytes (R a multiple of 4, or R ≤ 4) keep fewer low bits, down to 4 (config.ts). Relative epochs fit 30 bits; beyond that the store rebases. Everything is Int32
 * words in one typed array, so the hot path is plain integer loads and stores.
 *
 * Memory: the table grows by 1.3× when 85% full (table.ts), so it is 65% to 85% full:
 * 40 / 0.85 = 47 to 40 × 1.3 / 0.85 = 61 bytes per key at any size, slack included.
 * That is why N = 4 (15 s buckets for a minute): N = 5 needs a 44-byte slot, 67 bytes
 * per key just after a growth. N is a config value; more buckets cost 5 bytes each.
 *
 * ## Files
 *
 * store.ts (the API), slot.ts (one key's ring), table.ts (open addressing), wide.ts
 * (counts past 255), maintenance.ts (eviction, rebase), snapshot.ts (format), hash.ts
 * (fingerprints), exact-log.ts (the exact reference for tests and benchmarks).
 */
export { WindowStore, ADD_OK, ADD_LATE, ADD_CLAMPED, type AddResult } from './store.js';
export { windowLayout, type WindowConfig, type WindowLayout } from './config.js';
export { keyFingerprint, keyFingerprintInto, fingerprintSeeds } from './hash.js';
export { ExactSlidingLog, type ExactSlidingLogOptions } from './exact-log.js';
