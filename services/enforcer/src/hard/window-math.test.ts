import { describe, expect, it } from 'vitest';
import { emptyCounts, slidingWindowHit } from './window-math.js';

const T0 = 1_800_000_000_000; // a multiple of the interval

describe('slidingWindowHit with costs (the local failure mode, as hardLimit-n.lua)', () => {
  it('admits a request whole for its cost or not at all; remaining counts cost units', () => {
    const counts = emptyCounts();
    expect(slidingWindowHit(counts, 10, 60_000, T0, 5)).toEqual({ allowed: true, remaining: 5, retryAfterMs: 0 });
    expect(slidingWindowHit(counts, 10, 60_000, T0, 5)).toEqual({ allowed: true, remaining: 0, retryAfterMs: 0 });
    expect(slidingWindowHit(counts, 10, 60_000, T0, 1)).toEqual({ allowed: false, remaining: 0, retryAfterMs: 66_000 });
    expect(counts.current).toBe(10);
  });

  it('never admits a cost over the limit, and says so with a whole window', () => {
    const counts = emptyCounts();
    expect(slidingWindowHit(counts, 10, 60_000, T0, 11)).toEqual({ allowed: false, remaining: 0, retryAfterMs: 60_000 });
    expect(counts.current).toBe(0);
  });

  it('counts a cost of 1 as before', () => {
    const counts = emptyCounts();
    for (let i = 0; i < 3; i++) expect(slidingWindowHit(counts, 3, 1_000, T0).allowed).toBe(true);
    expect(slidingWindowHit(counts, 3, 1_000, T0).allowed).toBe(false);
  });
});
