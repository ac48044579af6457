import { describe, expect, it } from 'vitest';
import { defaultWarmupMs, leastSquaresSlope, mbPerMinAfter } from './slope.js';

const MB = 1024 * 1024;

describe('memory slope', () => {
  it('is the least-squares slope of a noisy line', () => {
    // value = 3t + 7 with noise that sums to zero and is uncorrelated with t.
    const noise = [1, -1, -1, 1, 1, -1, -1, 1];
    const samples = noise.map((e, i) => ({ t: i * 10, value: 3 * i * 10 + 7 + e }));
    expect(leastSquaresSlope(samples)).toBeCloseTo(3, 10);
    expect(leastSquaresSlope([{ t: 0, value: 1 }])).toBeNaN();
    expect(
      leastSquaresSlope([
        { t: 5, value: 1 },
        { t: 5, value: 9 },
      ]),
    ).toBeNaN();
  });

  it('counts only samples after the warm-up, in MB per minute', () => {
    // Fast start-up growth for 2 minutes, then 0.5 MB a minute, sampled every 5 s.
    const samples = Array.from({ length: 120 }, (_, i) => {
      const t = i * 5_000;
      const value = t < 120_000 ? 50 * MB * (t / 120_000) : 50 * MB + 0.5 * MB * ((t - 120_000) / 60_000);
      return { t, value };
    });
    expect(mbPerMinAfter(samples, 120_000)).toBeCloseTo(0.5, 6);
    expect(mbPerMinAfter(samples, 0)).toBeGreaterThan(3);
  });

  it('warms up for two minutes, or a fifth of a shorter run', () => {
    expect(defaultWarmupMs(600_000)).toBe(120_000);
    expect(defaultWarmupMs(1_800_000)).toBe(120_000);
    expect(defaultWarmupMs(120_000)).toBe(24_000);
  });
});
