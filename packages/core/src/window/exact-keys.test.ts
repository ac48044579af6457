import { describe, expect, it } from 'vitest';
import { ADD_OK, ExactSlidingLog, WindowStore, windowLayout } from './index.js';

const T0 = 1_700_000_040_000; // a multiple of 15 s and of 60 s
const MIN = 60_000;
const config = { windowMs: MIN, buckets: 4, graceMs: 5_000, maxSkewMs: 1_000 };

/** Adds each time once to the store and the exact log. */
function feed(s: WindowStore, log: ExactSlidingLog, key: string, times: number[]): void {
  for (const t of times) {
    s.add(key, t, 1, t);
    log.add(key, t);
  }
}

/** 40 events bunched unevenly in [T0, T0 + 15 s): the span and shape model cannot place them all. */
const uneven = [...Array.from({ length: 10 }, (_, i) => T0 + 100 + i), ...Array.from({ length: 20 }, (_, i) => T0 + 7_000 + 50 * i), ...Array.from({ length: 10 }, (_, i) => T0 + 14_000 + i)];

describe('exact keys (exactFrom)', () => {
  it('is off by default, and validated when given', () => {
    expect(windowLayout(config)).toMatchObject({ exactFrom: Infinity, heatGate: 2 ** 30 });
    expect(windowLayout({ ...config, exactFrom: 50 })).toMatchObject({ exactFrom: 50, exactLaneCap: 800, exactUnitMs: 1, heatGate: 5 });
    expect(windowLayout({ ...config, exactFrom: 1 }).exactLaneCap).toBe(256);
    for (const exactFrom of [0, -1, 2.5, Number.NaN, 2 ** 31]) {
      expect(() => windowLayout({ ...config, exactFrom })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    }
  });

  it('leaves a key cold below exactFrom and makes it exact at exactFrom', () => {
    const s = new WindowStore({ ...config, exactFrom: 20 });
    for (let i = 0; i < 19; i++) s.add('k', T0 + i, 1, T0 + i);
    expect([s.exactKeys, s.wideKeys]).toEqual([0, 0]);
    s.add('k', T0 + 19, 1, T0 + 19);
    expect([s.exactKeys, s.wideKeys]).toEqual([1, 1]);
    expect(s.estimate('k', T0 + 19)).toBe(20);
  });

  it('counts the partly expired bucket of an exact key exactly where the model cannot', () => {
    const cold = new WindowStore(config);
    const recorded = new WindowStore({ ...config, exactFrom: 1 });
    const log = new ExactSlidingLog({ windowMs: MIN });
    feed(cold, log, 'k', uneven);
    for (const t of uneven) recorded.add('k', t, 1, t);
    let coldWrong = 0;
    for (let at = T0 + MIN; at < T0 + MIN + 15_000; at += 37) {
      const exact = log.count('k', at);
      expect(recorded.estimate('k', at)).toBe(exact);
      expect(recorded.upperBound('k', at)).toBe(exact);
      if (cold.estimate('k', at) !== exact) coldWrong++;
    }
    expect(coldWrong).toBeGreaterThan(50); // the case is a real one for the model
  });

  it('models only the events counted before the key turned exact', () => {
    const s = new WindowStore({ ...config, exactFrom: 10 });
    const log = new ExactSlidingLog({ windowMs: MIN });
    // Nine events at T0 + 100 (cold, one ms: the model is exact for them), then the rest.
    for (let i = 0; i < 9; i++) {
      s.add('k', T0 + 100, 1, T0 + 100);
      log.add('k', T0 + 100);
    }
    feed(s, log, 'k', uneven.slice(10));
    expect(s.exactKeys).toBe(1);
    for (let at = T0 + MIN; at < T0 + MIN + 15_000; at += 37) expect(s.estimate('k', at)).toBe(log.count('k', at));
  });

  it('records late events of an exact key in their own bucket', () => {
    const s = new WindowStore({ ...config, exactFrom: 1 });
    const log = new ExactSlidingLog({ windowMs: MIN });
    feed(s, log, 'k', [T0 + 15_000, T0 + 15_001]); // bucket 1: the key is exact from here
    for (const t of [T0 + 14_000, T0 + 11_000, T0 + 12_500]) {
      expect(s.add('k', t, 1, T0 + 15_001)).toBe(ADD_OK); // late, inside the grace period, into bucket 0
      log.add('k', t);
    }
    for (let at = T0 + MIN + 15_001; at > T0 + MIN; at -= 500) expect(s.estimate('k', at)).toBe(log.count('k', at));
  });

  it('falls back to the span model for a lane past the cap, within the usual bounds', () => {
    const s = new WindowStore({ ...config, exactFrom: 1 }); // cap 256 offsets a lane
    for (let i = 0; i < 300; i++) s.add('k', T0 + i * 40, 1, T0 + i * 40);
    const at = T0 + MIN + 6_000; // the window starts at T0 + 6001: 149 events remain
    const estimate = s.estimate('k', at);
    expect(estimate).toBeGreaterThanOrEqual(140);
    expect(estimate).toBeLessThanOrEqual(160);
    expect(s.upperBound('k', at)).toBe(299);
  });

  it('stops recording once the live count falls under half of exactFrom, and goes back to Uint8 lanes', () => {
    const s = new WindowStore({ ...config, exactFrom: 20 });
    for (let i = 0; i < 30; i++) s.add('k', T0 + i, 1, T0 + i);
    expect(s.exactKeys).toBe(1);
    const byteLength = s.byteLength;
    s.add('k', T0 + MIN + 20_000, 1, T0 + MIN + 20_000); // bucket 0 left the ring: live count 1
    expect([s.exactKeys, s.wideKeys]).toEqual([0, 0]);
    expect(s.estimate('k', T0 + MIN + 20_000)).toBe(1);
    expect(s.byteLength).toBe(byteLength); // pools keep their arrays for the next exact key
  });

  it('releases the offsets of deleted and evicted keys', () => {
    const s = new WindowStore({ ...config, exactFrom: 5 });
    for (let k = 0; k < 50; k++) for (let i = 0; i < 10; i++) s.add(`k${k}`, T0 + i, 1, T0 + i);
    expect(s.exactKeys).toBe(50);
    expect(s.delete('k0')).toBe(true);
    expect(s.exactKeys).toBe(49);
    expect(s.evictIdle(T0 + 10 * MIN)).toBe(49);
    expect([s.exactKeys, s.wideKeys, s.size]).toEqual([0, 0, 0]);
  });

  it('reuses the offsets of keys that went away: memory stays flat under churn', () => {
    const s = new WindowStore({ ...config, exactFrom: 5, initialCapacity: 4096 });
    const sizes: number[] = [];
    for (let round = 0; round < 12; round++) {
      const t0 = T0 + round * 10 * MIN;
      for (let i = 0; i < 300; i++) {
        const t = t0 + i * 100; // 30 s of traffic: lanes grow through several segment sizes
        for (let k = 0; k < 40; k++) s.add(`r${round}k${k}`, t + k, 1, t + k);
      }
      expect(s.exactKeys).toBe(40);
      s.evictIdle(t0 + 5 * MIN);
      expect(s.exactKeys).toBe(0);
      sizes.push(s.byteLength);
    }
    expect(sizes[11]).toBe(sizes[1]);
  });

  it('keeps exact keys through table growth and rebasing', () => {
    const s = new WindowStore({ windowMs: 4, buckets: 4, graceMs: 0, maxSkewMs: 0, exactFrom: 2, initialCapacity: 8 });
    for (let i = 0; i < 50; i++) s.add(`k${i}`, 10, 3, 10);
    expect(s.exactKeys).toBe(50);
    const far = 10 + 2 ** 31;
    s.add('b', far, 2, far);
    s.add('b', far + 1, 1, far + 1);
    expect([s.exactKeys, s.has('k0')]).toEqual([1, false]);
    expect(s.estimate('b', far + 1)).toBe(3);
    expect(s.estimate('b', far + 4)).toBe(1);
  });
});
