import { describe, expect, it } from 'vitest';
import { WindowCounter } from './window-counter.js';

describe('WindowCounter', () => {
  it('keeps each window length and limit apart, however the adds alternate', () => {
    const counter = new WindowCounter(5_000);
    const t0 = 1_700_000_000_000;
    for (let i = 0; i < 30; i++) {
      const t = t0 + i * 100;
      counter.add('p|ip:1', 60_000, t, 1, t, 1_000);
      counter.add('p|ip:1', 1_000, t, 2, t, 10);
      counter.add('p|ip:1', 60_000, t, 1, t);
    }
    const at = t0 + 2_900;
    expect(counter.estimate('p|ip:1', 60_000, at, 1_000)).toBe(30);
    expect(counter.estimate('p|ip:1', 60_000, at)).toBe(30);
    // The last second holds the last 10 adds of 2 (exact: the key went exact at a tenth of its limit).
    expect(counter.estimate('p|ip:1', 1_000, at, 10)).toBe(20);
    expect(counter.keys).toBe(3);
  });
});
