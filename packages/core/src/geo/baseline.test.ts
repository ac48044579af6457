import { describe, expect, it } from 'vitest';
import { HourlyBaseline, HOURS_PER_WEEK } from './baseline.js';

describe('HourlyBaseline', () => {
  it('keeps the exact mean and population variance while an hour has fewer than 1/alpha samples', () => {
    const b = new HourlyBaseline(0.01);
    for (const x of [2, 4, 4, 4, 5, 5, 7, 9]) b.learn(3, x);
    expect(b.stats(3).samples).toBe(8);
    expect(b.stats(3).mean).toBeCloseTo(5, 12);
    expect(b.stats(3).variance).toBeCloseTo(4, 12);
    expect(b.stats(4)).toEqual({ samples: 0, mean: 0, variance: 0 });
    expect(b.learnedHours).toBe(1);
  });

  it('then weighs new samples by alpha, so a lasting change is learned gradually', () => {
    const b = new HourlyBaseline(0.1);
    for (let i = 0; i < 10; i++) b.learn(0, 10);
    expect(b.stats(0)).toMatchObject({ mean: 10, variance: 0 });
    b.learn(0, 20);
    expect(b.stats(0).mean).toBeCloseTo(11, 12); // 10 + 0.1 × 10, not the running mean 10.9
    expect(b.stats(0).variance).toBeCloseTo(0.9 * (0 + 10 * 1), 12);
    for (let i = 0; i < 200; i++) b.learn(0, 20);
    expect(b.stats(0).mean).toBeCloseTo(20, 6);
    expect(b.stats(0).variance).toBeLessThan(1e-6);
  });

  it('goes through its arrays unchanged, and refuses arrays of another length', () => {
    const b = new HourlyBaseline(0.05);
    b.learn(0, 1);
    b.learn(167, 3);
    b.learn(167, 5);
    const again = HourlyBaseline.fromArrays(0.05, b.toArrays());
    expect(again.toArrays()).toEqual(b.toArrays());
    expect(again.stats(167)).toEqual({ samples: 2, mean: 4, variance: 1 });
    expect(() => HourlyBaseline.fromArrays(0.05, { samples: [1], means: [1], variances: [0] })).toThrow(`${HOURS_PER_WEEK} hours`);
    expect(() => new HourlyBaseline(0)).toThrow(RangeError);
  });
});
