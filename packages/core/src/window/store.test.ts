import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '../errors.js';
import { ADD_CLAMPED, ADD_LATE, ADD_OK, WindowStore, windowLayout } from './index.js';

const T0 = 1_700_000_040_000; // a multiple of 15 s and of 60 s: bucket edges fall on round times
const MIN = 60_000;
const config = { windowMs: MIN, buckets: 4, graceMs: 5_000, maxSkewMs: 1_000 };

function store(overrides: Partial<typeof config> & { initialCapacity?: number } = {}): WindowStore {
  return new WindowStore({ ...config, ...overrides });
}

describe('config', () => {
  it('derives the 40-byte slot of the default layout', () => {
    const l = windowLayout(config);
    expect(l).toMatchObject({ ring: 5, granularityMs: 15_000, strideWords: 10, unitMs: 1, countWord: 8 });
  });

  it('rejects sub-windows that are not whole ms, and nonsense numbers', () => {
    for (const bad of [{ buckets: 7 }, { buckets: 0 }, { windowMs: -1 }, { graceMs: 1.5 }, { windowMs: Number.NaN }]) {
      expect(() => windowLayout({ ...config, ...bad })).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    }
  });

  it('stores span offsets in coarser units when a bucket is longer than 16 384 ms', () => {
    expect(windowLayout({ windowMs: 24 * 3_600_000, buckets: 8, graceMs: 0 }).unitMs).toBe(660);
  });
});

describe('counting', () => {
  it('counts whole buckets and interpolates the partly expired one over its occupied span', () => {
    const s = store();
    // Ten events spread evenly over [T0, T0 + 9000] in bucket 0, then one in bucket 4.
    for (let i = 0; i < 10; i++) s.add('k', T0 + i * 1000, 1, T0 + i * 1000);
    const at = T0 + MIN + 4_000; // window (T0 + 4000, at]: events at 5000..9000 remain, 5 of them
    s.add('k', at, 1, at);
    // Span [0, 9000] ms, an even spread (shape 1/2), window starts at offset 4001:
    // 10 × (9000 − 4001 + 1) / 9001 ≈ 5.55, rounded to whole events.
    expect(s.estimate('k', at)).toBe(1 + Math.round((10 * 5000) / 9001));
  });

  it('drops a burst exactly when the window passes its last event', () => {
    const s = store();
    s.add('k', T0 + 14_000, 99, T0 + 14_000); // a burst at the very end of a bucket
    expect(s.estimate('k', T0 + 14_000 + MIN - 1)).toBe(99); // still inside
    expect(s.estimate('k', T0 + 14_000 + MIN)).toBe(0); // gone
  });

  it('never counts the oldest bucket below its last event nor above all but its first', () => {
    const s = store();
    for (let i = 0; i < 10; i++) s.add('k', T0 + i * 1000, 1, T0 + i * 1000);
    // Window start just after the first event: the even spread says ~10 × 9000/9001.
    expect(s.estimate('k', T0 + MIN)).toBe(9);
    // Just before the last event leaves: the even spread says ~10 / 9001.
    expect(s.estimate('k', T0 + 9_000 + MIN - 1)).toBe(1);
  });

  it('tells a decoy at the bucket start from an even spread, also once the key is wide', () => {
    const s = store();
    s.add('k', T0, 1, T0); // the decoy stretches the span over the whole bucket
    s.add('k', T0 + 14_990, 98, T0 + 14_990); // the burst sits at its end
    const at = T0 + 14_990 + MIN - 1; // the burst is still inside the exact window
    // An even spread over the span would say it has left (1); the shape puts it at the end.
    expect(s.estimate('k', at)).toBe(98);
    expect(s.estimate('k', at + 1)).toBe(0);
    expect(s.upperBound('k', at)).toBe(98);
    expect(s.upperBound('k', at + 1)).toBe(0);
    s.add('k', T0 + MIN, 300, T0 + MIN); // promotes the key: the shapes must survive
    expect(s.wideKeys).toBe(1);
    expect(s.estimate('k', at)).toBe(398);
  });

  it('floors fractional times and never answers below zero for the past', () => {
    const s = store();
    s.add('k', T0 + 0.9, 2, T0 + 0.9);
    expect(s.estimate('k', T0)).toBe(2);
    expect(s.estimate('k', T0 - 10 * MIN)).toBe(0);
  });

  it('answers 0 for unknown keys and after the window has passed', () => {
    const s = store();
    expect(s.estimate('nobody', T0)).toBe(0);
    s.add('k', T0, 3, T0);
    expect(s.estimate('k', T0 + 2 * MIN)).toBe(0);
    expect(s.has('k')).toBe(true);
  });

  it('keeps keys apart', () => {
    const s = store();
    s.add('ip:203.0.113.7', T0, 2, T0);
    s.add('ip:203.0.113.8', T0, 5, T0);
    expect(s.estimate('ip:203.0.113.7', T0)).toBe(2);
    expect(s.estimate('ip:203.0.113.8', T0)).toBe(5);
  });

  it('treats count 0 as a no-op and refuses negative, fractional or huge counts and non-finite times', () => {
    const s = store();
    expect(s.add('k', T0, 0, T0)).toBe(ADD_OK);
    expect(s.has('k')).toBe(false);
    for (const [count, time] of [
      [-1, T0],
      [1.5, T0],
      [2 ** 32, T0],
      [1, Number.NaN],
      [1, Infinity],
    ] as const) {
      expect(() => s.add('k', time, count, T0)).toThrow(expect.objectContaining({ code: 'WINDOW_INVALID_ARGUMENT' }));
    }
  });
});

describe('event time', () => {
  it('counts late events inside the grace period in their own bucket and rejects later ones', () => {
    const s = store();
    const now = T0 + 20_000;
    expect(s.add('k', now - 5_000, 1, now)).toBe(ADD_OK); // exactly at the grace limit
    expect(s.add('k', now - 5_001, 1, now)).toBe(ADD_LATE);
    expect(s.estimate('k', now)).toBe(1);
    expect(s.estimate('k', now - 5_000 + MIN - 1)).toBe(1);
    expect(s.estimate('k', now - 5_000 + MIN)).toBe(0); // it sat in its own bucket, at its own time
  });

  it('rejects events older than the ring holds even inside a long grace period', () => {
    const s = store({ graceMs: 10 * MIN });
    const now = T0 + 5 * MIN;
    expect(s.add('k', now, 1, now)).toBe(ADD_OK);
    expect(s.add('k', now - 2 * MIN, 1, now)).toBe(ADD_LATE); // older than R = 5 buckets of 15 s
    expect(s.add('k', now - 59_000, 1, now)).toBe(ADD_OK);
  });

  it('counts events from beyond the allowed clock skew at now + skew', () => {
    const s = store();
    expect(s.add('k', T0 + 1_000, 1, T0)).toBe(ADD_OK);
    expect(s.add('k', T0 + 3_600_000, 1, T0)).toBe(ADD_CLAMPED);
    expect(s.estimate('k', T0 + 1_000)).toBe(2);
    expect(s.estimate('k', T0 + 1_000 + MIN)).toBe(0);
  });
});

describe('wide counts', () => {
  it('promotes a key past 255 events in a bucket without losing any', () => {
    const s = store();
    for (let i = 0; i < 300; i++) s.add('hot', T0 + i, 1, T0 + i);
    expect(s.wideKeys).toBe(1);
    expect(s.estimate('hot', T0 + 300)).toBe(300);
    s.add('hot', T0 + 20_000, 1e9, T0 + 20_000);
    expect(s.estimate('hot', T0 + 20_000)).toBe(1e9 + 300);
    expect(s.estimate('hot', T0 + 20_000 + MIN - 1)).toBe(1e9); // the old bucket slid out, exactly
  });

  it('keeps many wide keys apart while the pool grows', () => {
    const s = store();
    for (let i = 0; i < 500; i++) s.add(`hot${i}`, T0, 256 + i, T0);
    expect(s.wideKeys).toBe(500);
    for (let i = 0; i < 500; i++) expect(s.estimate(`hot${i}`, T0)).toBe(256 + i);
  });

  it('returns the wide entry to the pool when the key goes', () => {
    const s = store();
    s.add('hot', T0, 1000, T0);
    expect(s.delete('hot')).toBe(true);
    expect(s.wideKeys).toBe(0);
    s.add('hot2', T0, 1000, T0);
    expect(s.wideKeys).toBe(1);
  });
});

describe('table', () => {
  it('grows from a tiny table and keeps every key', () => {
    const s = store({ initialCapacity: 8 });
    for (let i = 0; i < 20_000; i++) s.add(`key-${i}`, T0, (i % 7) + 1, T0);
    expect(s.size).toBe(20_000);
    expect(s.size / s.capacity).toBeGreaterThan(0.6);
    for (let i = 0; i < 20_000; i++) expect(s.estimate(`key-${i}`, T0)).toBe((i % 7) + 1);
  });

  it('evicts only keys no window can see any more, and shrinks when mostly empty', () => {
    const s = store({ initialCapacity: 8 });
    for (let i = 0; i < 5_000; i++) s.add(`old-${i}`, T0, 1, T0);
    s.add('recent', T0 + MIN, 1, T0 + MIN);
    const capacity = s.capacity;
    // Bucket [T0, T0 + 15 s) ends at T0 + 15 s; idle once now - grace - W + 1 passes it.
    expect(s.evictIdle(T0 + 15_000 + 5_000 + MIN - 2)).toBe(0);
    expect(s.evictIdle(T0 + 15_000 + 5_000 + MIN - 1)).toBe(5_000);
    expect(s.size).toBe(1);
    expect(s.capacity).toBeLessThan(capacity);
    expect(s.estimate('recent', T0 + MIN + 1)).toBe(1);
  });

  it('sweeps incrementally, a budget of slots at a time', () => {
    const s = store({ initialCapacity: 1024 });
    for (let i = 0; i < 500; i++) s.add(`k${i}`, T0, 1, T0);
    let removed = 0;
    for (let round = 0; round < 4; round++) removed += s.evictIdle(T0 + 10 * MIN, 256);
    expect(removed).toBe(500);
  });

  it('rebases relative epochs instead of overflowing them', () => {
    const s = new WindowStore({ windowMs: 4, buckets: 4, graceMs: 0, maxSkewMs: 0 });
    s.add('a', 10, 1, 10);
    const far = 10 + 2 ** 31; // 2^31 one-ms buckets later
    s.add('b', far, 2, far);
    s.add('b', far + 1, 1, far + 1);
    expect(s.has('a')).toBe(false);
    expect(s.estimate('b', far + 1)).toBe(3);
    expect(s.estimate('b', far + 4)).toBe(1);
  });
});

describe('batches', () => {
  it('counts like one call per event and reports each status', () => {
    const single = store();
    const batch = store();
    const h1 = new Uint32Array(300);
    const h2 = new Uint32Array(300);
    const times = new Float64Array(300);
    const counts = new Uint32Array(300);
    const pair = new Uint32Array(2);
    const now = T0 + MIN;
    for (let i = 0; i < 300; i++) {
      batch.fingerprintInto(`k${i % 17}`, pair);
      [h1[i], h2[i]] = [pair[0]!, pair[1]!];
      times[i] = i === 7 ? now - 6_000 : i === 9 ? now + 5_000 : now - (i % 50) * 97;
      counts[i] = (i % 3) + (i === 11 ? 400 : 0);
    }
    const statuses = new Uint8Array(300);
    expect(batch.addBatchHashed(h1, h2, times, counts, now, statuses)).toBe(1);
    for (let i = 0; i < 300; i++) expect(statuses[i]).toBe(single.addHashed(h1[i]!, h2[i]!, times[i]!, counts[i]!, now));
    expect([statuses[7], statuses[9]]).toEqual([ADD_LATE, ADD_CLAMPED]);
    for (let k = 0; k < 17; k++) expect(batch.estimate(`k${k}`, now + 5_000)).toBe(single.estimate(`k${k}`, now + 5_000));
  });

  it('refuses arrays of different lengths', () => {
    const err = (() => {
      try {
        store().addBatchHashed([1], [1, 2], [T0], undefined, T0);
      } catch (e) {
        return e;
      }
    })();
    expect(isBanstreamError(err, 'WINDOW_INVALID_ARGUMENT')).toBe(true);
  });
});

describe('fingerprintJoinedInto', () => {
  it('fingerprints prefix + rest as fingerprintInto does the whole key, under the store seed, past its prefix cache', () => {
    const s = new WindowStore({ windowMs: 60_000, buckets: 4, graceMs: 0, seed: 12345 });
    const joined = new Uint32Array(2);
    const whole = new Uint32Array(2);
    for (let i = 0; i < 2500; i++) {
      const prefix = `policy-${i % 1500}|ip:`;
      const rest = `203.0.113.${i % 256}`;
      s.fingerprintJoinedInto(prefix, rest, joined);
      s.fingerprintInto(prefix + rest, whole);
      expect([...joined]).toEqual([...whole]);
    }
  });
});

describe('eventSpanHashed', () => {
  const span = (s: WindowStore, key: string, at: number): number[] | undefined => {
    const h = new Uint32Array(2);
    const out = new Float64Array(2);
    s.fingerprintInto(key, h);
    return s.eventSpanHashed(h[0]!, h[1]!, at, out) ? [...out] : undefined;
  };

  it('gives the first and last events in the window, skipping a bucket whose events all left it', () => {
    const s = store();
    for (const t of [T0 + 1_000, T0 + 20_000, T0 + 50_000, T0 + 52_345]) s.add('k', t, 1, t);
    // Window (T0 + 10 s, T0 + 70 s]: the event at T0 + 1 s has left it.
    expect(span(s, 'k', T0 + 70_000)).toEqual([T0 + 20_000, T0 + 52_345]);
    expect(span(s, 'k', T0 + 52_345)).toEqual([T0 + 1_000, T0 + 52_345]);
  });

  it("gives the window's start when the oldest bucket's events straddle it, and nothing for a key without events there", () => {
    const s = store();
    for (const t of [T0 + 5_000, T0 + 12_000, T0 + 40_000]) s.add('k', t, 1, t);
    expect(span(s, 'k', T0 + 70_000)).toEqual([T0 + 10_001, T0 + 40_000]);
    expect(span(s, 'k', T0 + 200_000)).toBeUndefined();
    expect(span(s, 'other', T0 + 70_000)).toBeUndefined();
  });
});
