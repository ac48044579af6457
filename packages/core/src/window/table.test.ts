import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { keyFingerprint, WindowStore } from './index.js';

const W = 60_000;
const A = 1_000_000_000; // "old" time
const B = A + 10 * W; // "new" time: nothing counted at A is in a window at B

/**
 * Fingerprints are forced to share a handful of h1 values, so every key lands in one
 * of a few home slots: long probe runs, runs that wrap from the last slot to the first
 * (h1 = 0xffffffff), and backward-shift deletion in the middle of runs.
 */
const h1Arb = fc.constantFrom(0, 1, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff);

type Op = { kind: 'add'; h1: number; h2: number; phase: 0 | 1; count: number } | { kind: 'delete'; h1: number; h2: number } | { kind: 'evict' };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('add' as const),
      h1: h1Arb,
      h2: fc.integer({ min: 0, max: 30 }),
      phase: fc.constantFrom(0 as const, 1 as const),
      count: fc.integer({ min: 1, max: 300 }),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('delete' as const), h1: h1Arb, h2: fc.integer({ min: 0, max: 30 }) }) },
  { weight: 1, arbitrary: fc.constant({ kind: 'evict' as const }) },
);

describe('open addressing under collisions', () => {
  it('matches a Map model through adds, deletes and evictions with colliding home slots', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 200 }), (ops) => {
        const store = new WindowStore({ windowMs: W, buckets: 4, graceMs: 0, maxSkewMs: 0, initialCapacity: 8 });
        store.addHashed(9, 9, A, 1, A); // sets the origin at the old time
        const model = new Map<string, { newest: number; count: number }>([['9:9', { newest: A, count: 1 }]]);
        for (const op of ops) {
          const id = op.kind === 'evict' ? '' : `${op.h1}:${op.h2}`;
          if (op.kind === 'add') {
            const time = op.phase === 0 ? A : B;
            const entry = model.get(id);
            const late = entry !== undefined && entry.newest > time; // older than the ring holds
            expect(store.addHashed(op.h1, op.h2, time, op.count, time)).toBe(late ? 1 : 0);
            if (!late) model.set(id, { newest: time, count: (entry?.newest === time ? entry.count : 0) + op.count });
          } else if (op.kind === 'delete') {
            expect(store.deleteHashed(op.h1, op.h2)).toBe(model.delete(id));
          } else {
            // At B every key last counted at A is idle; keys counted at B stay.
            const idle = [...model].filter(([, e]) => e.newest === A).map(([k]) => k);
            expect(store.evictIdle(B)).toBe(idle.length);
            for (const k of idle) model.delete(k);
          }
          expect(store.size).toBe(model.size);
          for (const [k, e] of model) {
            const [h1, h2] = k.split(':').map(Number) as [number, number];
            expect(store.hasHashed(h1, h2)).toBe(true);
            expect(store.estimateHashed(h1, h2, e.newest)).toBe(e.count);
          }
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('fingerprints', () => {
  it('are deterministic, seed-dependent and allocation-free to compute into a buffer', () => {
    expect(keyFingerprint('ip:203.0.113.7')).toEqual(keyFingerprint('ip:203.0.113.7'));
    expect(keyFingerprint('ip:203.0.113.7', 1)).not.toEqual(keyFingerprint('ip:203.0.113.7', 2));
    expect(keyFingerprint('a')).not.toEqual(keyFingerprint('a\0'));
    const store = new WindowStore({ windowMs: W, buckets: 4, graceMs: 0, seed: 7 });
    const out = new Uint32Array(2);
    store.fingerprintInto('user:42', out);
    expect([out[0], out[1]]).toEqual(keyFingerprint('user:42', 7));
  });

  it('do not collide across 300,000 similar keys, in either half', () => {
    const seen = new Set<string>();
    const firsts = new Set<number>();
    for (let i = 0; i < 300_000; i++) {
      const [h1, h2] = keyFingerprint(`login|ip:10.${(i >>> 16) & 255}.${(i >>> 8) & 255}.${i & 255}`);
      seen.add(`${h1}:${h2}`);
      firsts.add(h1);
    }
    expect(seen.size).toBe(300_000);
    // 32-bit h1 alone: ~n²/2^33 ≈ 10 expected collisions, so a handful is fine; hundreds is not.
    expect(300_000 - firsts.size).toBeLessThan(40);
  });

  it('counts many distinct keys apart', () => {
    const store = new WindowStore({ windowMs: W, buckets: 4, graceMs: 0, initialCapacity: 8 });
    for (let i = 0; i < 50_000; i++) store.add(`user:${i}`, A, (i % 3) + 1, A);
    for (let i = 0; i < 50_000; i++) expect(store.estimate(`user:${i}`, A)).toBe((i % 3) + 1);
  });
});
