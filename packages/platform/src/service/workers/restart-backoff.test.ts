import { describe, expect, it } from 'vitest';
import { RestartBackoff } from './restart-backoff.js';

describe('RestartBackoff', () => {
  const options = { firstMs: 1_000, maxMs: 30_000, healthyAfterMs: 60_000 };

  it('doubles the wait for each quick death in a row, up to the cap', () => {
    const backoff = new RestartBackoff(options);
    expect([1, 2, 3, 4, 5, 6, 7].map(() => backoff.next(500))).toEqual([1_000, 2_000, 4_000, 8_000, 16_000, 30_000, 30_000]);
  });

  it('starts afresh after a worker that ran long enough', () => {
    const backoff = new RestartBackoff(options);
    backoff.next(500);
    backoff.next(500);
    expect(backoff.next(60_000)).toBe(1_000);
    expect(backoff.next(59_999)).toBe(2_000);
  });
});
