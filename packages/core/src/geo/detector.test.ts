import { describe, expect, it } from 'vitest';
import { GeoDetector, geoAlertId, type DetectorOptions, type DetectorOutput } from './detector.js';

const SEC = 1000;
const MIN = 60 * SEC;
const HOUR = 60 * MIN;
/** Monday 2026-06-01 00:00 UTC: hour of the week 0. */
const T0 = Date.UTC(2026, 5, 1);

function options(over: Partial<DetectorOptions> = {}): DetectorOptions {
  return {
    windowMs: MIN,
    lagMs: 5 * SEC,
    timeZone: 'UTC',
    thresholds: { ratio: 3, z: 5, minRate: 1 },
    warmupSamples: 30,
    alpha: 0.01,
    resolveMs: 2 * MIN,
    cooldownMs: 5 * MIN,
    ...over,
  };
}

const output = (): DetectorOutput => ({ verdicts: [], learned: 0 });

/** One entry a second, carrying the requests `perSecond` says (fractions carried over), as stage one sends them. */
function feed(d: GeoDetector, from: number, to: number, perSecond: number | ((t: number) => number), out: DetectorOutput): void {
  const rate = typeof perSecond === 'number' ? () => perSecond : perSecond;
  let carry = 0;
  for (let t = from; t < to; t += SEC) {
    carry += rate(t);
    const n = Math.floor(carry);
    if (n === 0) continue;
    d.add(t, n, out);
    carry -= n;
  }
}

describe('GeoDetector: warm-up and detection', () => {
  it('learns one sample per window and never alerts from an hour that has seen too few', () => {
    const young = new GeoDetector(options());
    const out = output();
    feed(young, T0, T0 + 20 * MIN, 2, out);
    expect(out.learned).toBe(19); // the windows ending 00:01 … 00:19: the first to end after its first entry
    feed(young, T0 + 20 * MIN, T0 + 25 * MIN, 40, out);
    expect(out.verdicts).toEqual([]);

    const warm = new GeoDetector(options());
    const out2 = output();
    feed(warm, T0, T0 + 40 * MIN, 2, out2);
    feed(warm, T0 + 40 * MIN, T0 + 45 * MIN, 40, out2);
    expect(out2.verdicts.map((v) => v.state)).toEqual(['fired']);
  });

  it('fires only when ratio, z-score and volume all reach their thresholds', () => {
    const verdicts = (baseline: number, spike: number, over: Partial<DetectorOptions> = {}) => {
      const d = new GeoDetector(options(over));
      const out = output();
      feed(d, T0, T0 + 40 * MIN, baseline, out);
      feed(d, T0 + 40 * MIN, T0 + 50 * MIN, spike, out);
      return out.verdicts;
    };
    // A steady 2/s: 120 a window, with a tenth of the mean as the least deviation.
    expect(verdicts(2, 5)).toEqual([]); // ratio 2.5
    expect(verdicts(2, 7)).toHaveLength(1); // ratio 3.5, z 17, 7/s
    expect(verdicts(2, 7, { thresholds: { ratio: 3, z: 20, minRate: 1 } })).toEqual([]); // z 17
    expect(verdicts(0.1, 0.9)).toEqual([]); // ratio 9, z 9.7, but under 1/s
    expect(verdicts(0.1, 0.9, { thresholds: { ratio: 3, z: 5, minRate: 0.5 } })).toHaveLength(1);
  });

  it('takes a few requests more than usual, at a few a window, for luck rather than an attack', () => {
    const d = new GeoDetector(options({ thresholds: { ratio: 3, z: 5, minRate: 0.1 } }));
    const out = output();
    feed(d, T0, T0 + 40 * MIN, 2 / 60, out); // two a minute
    feed(d, T0 + 40 * MIN, T0 + 41 * MIN, 10 / 60, out); // ten in a minute: ratio 5, 0.17/s
    feed(d, T0 + 41 * MIN, T0 + 45 * MIN, 2 / 60, out);
    // (10 − 2) / √2 would be 5.7 standard deviations; on the square-root scale it is 3.4.
    expect(out.verdicts).toEqual([]);
    feed(d, T0 + 45 * MIN, T0 + 46 * MIN, 30 / 60, out); // thirty: z 8
    expect(out.verdicts.map((v) => v.state)).toEqual(['fired']);
  });

  it('reports what it judged: rates per second, the hour of the week and the deviation', () => {
    const d = new GeoDetector(options());
    const out = output();
    feed(d, T0, T0 + 40 * MIN, 2, out);
    feed(d, T0 + 40 * MIN, T0 + 45 * MIN, 20, out);
    const fired = out.verdicts[0]!;
    expect(fired).toMatchObject({ state: 'fired', hourOfWeek: 0, samples: 40 });
    expect(fired.baselineRate).toBeCloseTo(2, 1); // the window ending 40:00 holds the spike's first second
    expect(fired.at).toBe(fired.firedAt);
    expect(fired.at - (T0 + 40 * MIN)).toBeLessThanOrEqual(20 * SEC); // the window reached 3× within 20 s
    expect(fired.rate).toBeCloseTo(fired.ratio * fired.baselineRate, 9);
    // A steady hour: the deviation is the tenth-of-the-mean floor, over-dispersion 0.01 × the expected count.
    const expected = fired.baselineRate * 60;
    expect(fired.zScore).toBeCloseTo((2 * (Math.sqrt(fired.rate * 60 + 3 / 8) - Math.sqrt(expected + 3 / 8))) / Math.sqrt(0.01 * expected), 9);
    expect(fired.stdDev).toBeCloseTo(0.1 * fired.baselineRate, 3);
    expect(geoAlertId('FR', fired.firedAt)).toBe(`geo-FR-${fired.firedAt}`);
  });
});

describe('GeoDetector: one episode, resolve, cooldown', () => {
  it('fires once for a lasting spike, resolves after the rate stays back for resolveMs, then cools down', () => {
    const d = new GeoDetector(options());
    const out = output();
    feed(d, T0, T0 + 40 * MIN, 2, out);
    feed(d, T0 + 40 * MIN, T0 + 50 * MIN, 20, out);
    expect(out.verdicts.map((v) => v.state)).toEqual(['fired']);
    expect(d.firing).toBe(true);
    feed(d, T0 + 50 * MIN, T0 + 55 * MIN, 2, out);
    expect(out.verdicts.map((v) => v.state)).toEqual(['fired', 'resolved']);
    const [fired, resolved] = out.verdicts;
    expect(resolved!.firedAt).toBe(fired!.firedAt);
    // Back under half way (4/s) once the window holds less than 240: about 50:55; then two minutes.
    expect(resolved!.at).toBeGreaterThanOrEqual(T0 + 52 * MIN + 50 * SEC);
    expect(resolved!.at).toBeLessThanOrEqual(T0 + 53 * MIN + 10 * SEC);

    // Within the cooldown (5 min after resolving): nothing, and the spike's window is not learned.
    const learnedBefore = out.learned;
    feed(d, T0 + 55 * MIN, T0 + 56 * MIN, 20, out);
    feed(d, T0 + 56 * MIN, T0 + 59 * MIN, 2, out);
    expect(out.verdicts).toHaveLength(2);
    expect(out.learned - learnedBefore).toBe(3); // the windows ending 55, 57 and 58, not 56
    // After it: a new episode with its own id.
    feed(d, T0 + 59 * MIN, T0 + 60 * MIN, 20, out);
    expect(out.verdicts.map((v) => v.state)).toEqual(['fired', 'resolved', 'fired']);
    expect(out.verdicts[2]!.firedAt).toBeGreaterThan(resolved!.at + 5 * MIN);
  });

  it('stays one episode across hours of the week, and learns nothing while it is open', () => {
    const d = new GeoDetector(options());
    const out = output();
    feed(d, T0 - 7 * 24 * HOUR, T0 - 7 * 24 * HOUR + 6 * HOUR, 2, out); // last week's hours 0-5
    feed(d, T0, T0 + HOUR + 10 * SEC, 2, out);
    const learned = out.learned;
    feed(d, T0 + HOUR + 10 * SEC, T0 + 4 * HOUR, 30, out);
    expect(out.verdicts.map((v) => v.state)).toEqual(['fired']);
    expect(out.learned).toBe(learned);
  });

  it('judges a silent subject when told the event time has moved on, so an alert resolves without traffic', () => {
    const d = new GeoDetector(options());
    const out = output();
    feed(d, T0, T0 + 40 * MIN, 2, out);
    feed(d, T0 + 40 * MIN, T0 + 45 * MIN, 20, out);
    d.advanceTo(T0 + 50 * MIN, out);
    expect(out.verdicts.map((v) => v.state)).toEqual(['fired', 'resolved']);
  });
});

describe('GeoDetector: local hours of the week across daylight-saving time', () => {
  // Quiet nights and a busy day from 07:00 local time, in Paris. Europe/Paris springs
  // forward on Sunday 2026-03-29 at 02:00: 07:00 local is 06:00 UTC the Sunday before, 05:00 UTC after.
  const parisHour = new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', hour: '2-digit', hourCycle: 'h23' });
  const busyFromSeven = (t: number) => (Number(parisHour.format(t)) >= 7 ? 6 : 1);
  const week = (timeZone: string) => {
    const d = new GeoDetector(options({ timeZone }));
    const out = output();
    feed(d, Date.UTC(2026, 2, 20, 23), Date.UTC(2026, 2, 29, 10), busyFromSeven, out); // Saturday 21 00:00 CET to Sunday 29 12:00 CEST
    return out.verdicts;
  };

  it('learns in the local hours of the zone, so the daily peak after the change is still normal', () => {
    expect(week('Europe/Paris')).toEqual([]);
  });

  it('where hours of the week in UTC would see the morning an hour early and raise a false alert', () => {
    const verdicts = week('UTC');
    expect(verdicts[0]).toMatchObject({ state: 'fired' });
    expect(verdicts[0]!.at).toBeGreaterThan(Date.UTC(2026, 2, 29, 5)); // 07:00 CEST
    expect(verdicts[0]!.at).toBeLessThan(Date.UTC(2026, 2, 29, 5, 1));
  });
});

describe('GeoDetector: snapshot and restore', () => {
  it('continues where the snapshot was taken: a replay of entries already judged learns nothing again', () => {
    const d = new GeoDetector(options());
    const out = output();
    feed(d, T0, T0 + 40 * MIN, 2, out);
    const snapshot = structuredClone(d.snapshot());
    expect(snapshot.evaluatedUntil).toBe(T0 + 39 * MIN + 50 * SEC);

    const restored = GeoDetector.restore(options(), snapshot);
    const again = output();
    feed(restored, T0 + 35 * MIN, T0 + 40 * MIN, 2, again); // the replay on assignment
    expect(again).toEqual({ verdicts: [], learned: 0 });
    feed(d, T0 + 40 * MIN, T0 + 45 * MIN, 20, out);
    feed(restored, T0 + 40 * MIN, T0 + 45 * MIN, 20, again);
    expect(again.verdicts).toEqual(out.verdicts);
    expect(again.verdicts).toHaveLength(1);
  });

  it('neither learns from nor resolves on windows older than its first entry after a restore', () => {
    const d = new GeoDetector(options());
    const out = output();
    feed(d, T0, T0 + 40 * MIN, 2, out);
    feed(d, T0 + 40 * MIN, T0 + 42 * MIN, 20, out);
    const restored = GeoDetector.restore(options(), structuredClone(d.snapshot()));
    const again = output();
    // No replay reached back: the first entry it sees is at 43:00, with the spike still on.
    feed(restored, T0 + 43 * MIN, T0 + 46 * MIN, 20, again);
    expect(restored.firing).toBe(true);
    expect(again).toEqual({ verdicts: [], learned: 0 });
  });

  it('starts the hours over when the zone changed, keeping the open alert', () => {
    const d = new GeoDetector(options());
    const out = output();
    feed(d, T0, T0 + 40 * MIN, 2, out);
    feed(d, T0 + 40 * MIN, T0 + 42 * MIN, 20, out);
    const moved = GeoDetector.restore(options({ timeZone: 'Asia/Tokyo' }), d.snapshot());
    expect(moved.learnedHours).toBe(0);
    expect(moved.firing).toBe(true);
    expect(d.learnedHours).toBe(1);
  });
});

describe('GeoDetector: windows across an hour boundary', () => {
  it('judges a window that straddles two hours against both, so a sharp drop on the hour is not news', () => {
    const d = new GeoDetector(options());
    const out = output();
    const dropAtOne = (weekStart: number) => (t: number) => (t < weekStart + HOUR ? 10 : 2);
    // Last week and this week alike: hour 0 at 10/s, hour 1 at 2/s.
    const lastWeek = T0 - 7 * 24 * HOUR;
    feed(d, lastWeek - 10 * MIN, lastWeek + 2 * HOUR, dropAtOne(lastWeek), out);
    feed(d, T0 - 10 * MIN, T0 + 2 * HOUR, dropAtOne(T0), out);
    // 01:00:10 still holds 50 s of hour 0: 8.7/s, over four times hour 1's 2/s.
    expect(out.verdicts).toEqual([]);
    const straddling = d.judge(T0 + HOUR + 10 * SEC);
    expect(straddling.baselineRate).toBeCloseTo((50 * 10 + 10 * 2) / 60, 1);
    expect(straddling.hourOfWeek).toBe(1);
  });
});
