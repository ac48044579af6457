import { describe, expect, it } from 'vitest';
import { LocalLimiter } from './local-limiter.js';
import { emptyCounts, slidingWindowHit } from './window-math.js';

const HOUR = 3_600_000;
const T0 = 1_000 * HOUR; // a window start

describe('slidingWindowHit', () => {
  it('admits the limit within one window and says when the next request fits', () => {
    const counts = emptyCounts();
    const replies = Array.from({ length: 4 }, () => slidingWindowHit(counts, 3, HOUR, T0 + 10));
    expect(replies.map((r) => r.allowed)).toEqual([true, true, true, false]);
    expect(replies.map((r) => r.remaining)).toEqual([2, 1, 0, 0]);
    // Full window: the next window must let (3-1)/3 of this one's weight go: a third of it.
    expect(replies[3]!.retryAfterMs).toBe(HOUR - 10 + Math.ceil(HOUR / 3));
    expect(counts).toEqual({ window: 1_000, current: 3, previous: 0 });
  });

  it('weights the previous window by how much of it the sliding window still covers', () => {
    const counts = emptyCounts();
    for (let i = 0; i < 10; i++) slidingWindowHit(counts, 10, HOUR, T0);
    // Half-way through the next window the estimate is 10 * 0.5 = 5: five more fit.
    const half = T0 + HOUR + HOUR / 2;
    const replies = Array.from({ length: 6 }, () => slidingWindowHit(counts, 10, HOUR, half));
    expect(replies.map((r) => r.allowed)).toEqual([true, true, true, true, true, false]);
    expect(replies[0]!.remaining).toBe(4);
    // 5 now + 10 * weight <= 9 needs the weight at 0.4: 0.1 h later.
    expect(replies[5]!.retryAfterMs).toBe(HOUR / 10);
    expect(slidingWindowHit(counts, 10, HOUR, half + HOUR / 10).allowed).toBe(true);
  });

  it('forgets everything after two idle windows', () => {
    const counts = emptyCounts();
    for (let i = 0; i < 5; i++) slidingWindowHit(counts, 5, HOUR, T0);
    expect(slidingWindowHit(counts, 5, HOUR, T0 + 2 * HOUR).remaining).toBe(4);
    expect(counts.previous).toBe(0);
  });
});

describe('LocalLimiter', () => {
  it('limits each key on its own', () => {
    const limiter = new LocalLimiter(10);
    expect(limiter.hit('a', 1, HOUR, T0).allowed).toBe(true);
    expect(limiter.hit('a', 1, HOUR, T0).allowed).toBe(false);
    expect(limiter.hit('b', 1, HOUR, T0).allowed).toBe(true);
  });

  it('stays within its bound by evicting the least recently used key', () => {
    const limiter = new LocalLimiter(2);
    limiter.hit('a', 1, HOUR, T0);
    limiter.hit('b', 1, HOUR, T0);
    limiter.hit('a', 1, HOUR, T0); // a is now the most recent
    limiter.hit('c', 1, HOUR, T0); // evicts b
    expect(limiter.size).toBe(2);
    expect(limiter.hit('a', 1, HOUR, T0).allowed).toBe(false);
    expect(limiter.hit('b', 1, HOUR, T0).allowed).toBe(true); // forgotten, so admitted again
  });
});
