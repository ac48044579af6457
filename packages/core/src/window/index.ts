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
 * ## Exact keys
 *
 * The model's errors all come from the partly expired oldest bucket, and they only move
 * a decision for a key whose count is near a limit. So a key whose live count (all R
 * buckets) reaches WindowConfig.exactFrom (callers: a tenth of their smallest limit;
 * off by default) turns exact and records the ms offset of each of its events from then
 * on, per lane, as sorted Uint16s in a pooled segment (exact-pool.ts). Its oldest bucket then
 * counts exactly: recorded offsets at or after the window start (a binary search), plus
 * the events counted before the key turned exact, modeled by the span and shape they had
 * at that moment (frozen). Every bucket that starts while the key is exact is recorded
 * from its start, so the model is left with the events a key counted in the minute
 * before it turned exact: about exactFrom of them, too few to be off by much. A lane past
 * exactLaneCap offsets (16 × exactFrom: a key far over any limit) drops them and is
 * modeled whole again; the slot keeps its span and shape current for every event, exact
 * or not, for exactly that. A key cools (frees its offsets, back to Uint8 lanes) when
 * its live count falls under exactFrom / 2 as its buckets roll, and when it is evicted
 * or deleted. An exact key lives in the wide pool, whose entry points at its offsets, so
 * the slot layout is unchanged and a cold key pays one comparison per event (is its
 * lane's count at heatGate?). On
 * bench/accuracy (limit 100, exactFrom 10) this takes wrong decisions from 0.012% to
 * 0.0003% and false bans from 3 to 0; the price is speed on exact keys (a few more cache
 * misses per event and estimate) and on that trace most requests come from exact keys.
 *
 * Keys are 64-bit fingerprints, never strings (collision odds in hash.ts): callers keep
 * subject text only for their few exact keys. Events count in the bucket of their own
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
 * An exact key adds its wide entry (44 bytes), 120 bytes of lane words and 2 bytes per
 * recorded event in segments of 8 · 2^c: about 450 bytes for a key at 100 events a minute,
 * more while the pools' arrays (grown by doubling) have room to spare, so 1% exact keys
 * add about 7 bytes per key (bench/window: bytes_per_key_with_hot_1pct).
 *
 * ## Files
 *
 * store.ts (the API), slot.ts (one key's ring), table.ts (open addressing), wide.ts
 * (counts past 255, exact keys), exact-pool.ts (recorded offsets), maintenance.ts (eviction,
 * rebase), hash.ts (fingerprints),
 * exact-log.ts (the exact reference for tests and benchmarks).
 */
export { WindowStore, ADD_OK, ADD_LATE, ADD_CLAMPED, type AddResult } from './store.js';
export { windowLayout, type WindowConfig, type WindowLayout } from './config.js';
export { continuedFingerprintInto, keyFingerprint, keyFingerprintInto, fingerprintSeeds, prefixHash, type PrefixHash } from './hash.js';
export { ExactSlidingLog, type ExactSlidingLogOptions } from './exact-log.js';
