import { describe, expect, it } from 'vitest';
import type { DetectorOptions, DetectorSnapshot } from '@banstream/core';
import { emptyReport, GeoWatch, snapshotOf } from './geo-watch.js';
import { Outbox } from './outbox.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 5, 1); // Monday 00:00 UTC
const options = (code: string): DetectorOptions => ({
  windowMs: MIN,
  lagMs: 5_000,
  timeZone: code.startsWith('FR') ? 'Europe/Paris' : 'UTC',
  thresholds: { ratio: 3, z: 5, minRate: 1 },
  warmupSamples: 30,
  alpha: 0.01,
  resolveMs: 2 * MIN,
  cooldownMs: 10 * MIN,
});

function run(watch: GeoWatch, subject: string, from: number, to: number, perSecond: number, out: Outbox, report = emptyReport()) {
  for (let t = from; t < to; t += 1000) watch.add(subject, t, perSecond, 0, out, report);
  return report;
}

describe('GeoWatch', () => {
  it('puts an alert keyed by code in the outbox, with the subject state in the same batch', () => {
    const watch = new GeoWatch({ optionsFor: options, restore: () => undefined });
    const out = new Outbox();
    run(watch, 'country:FR', T0, T0 + 40 * MIN, 2, out);
    out.drain();
    const report = run(watch, 'country:FR', T0 + 40 * MIN, T0 + 45 * MIN, 20, out);
    expect(report.verdicts.map((v) => [v.scope, v.code, v.verdict.state])).toEqual([['country', 'FR', 'fired']]);
    const [alert] = out.alerts;
    expect(alert!.key).toBe('FR');
    expect(alert!.value).toMatchObject({
      alertId: `geo-FR-${alert!.value!.at}`,
      scope: 'country',
      code: 'FR',
      state: 'fired',
      timeZone: 'Europe/Paris',
      hourOfWeek: 0,
      localHourOfWeek: 2, // Monday 00:40 UTC is 02:40 in Paris in June
    });
    const [state] = out.baselines;
    expect(state!.key).toBe('country:FR');
    expect(state!.value!.alert).toEqual({ firedAt: alert!.value!.at, normalSince: null });
  });

  it('restores a subject from its stored state, once, and writes only what changed', () => {
    const first = new GeoWatch({ optionsFor: options, restore: () => undefined });
    const out = new Outbox();
    run(first, 'region:FR-IDF', T0, T0 + 40 * MIN, 2, out);
    first.flush(T0, out);
    const stored = out.drain().baselines[0]!.value!;
    expect(stored).toMatchObject({ subject: 'region:FR-IDF', timeZone: 'Europe/Paris', cooldownUntil: -1, alert: null });
    expect(stored.evaluatedUntil).toBe(T0 + 39 * MIN + 50_000);
    first.flush(T0, out);
    expect(out.baselines).toEqual([]); // nothing changed since

    const asked: string[] = [];
    const second = new GeoWatch({ optionsFor: options, restore: (s): DetectorSnapshot | undefined => (asked.push(s), snapshotOf(stored)) });
    const report = run(second, 'region:FR-IDF', T0 + 38 * MIN, T0 + 40 * MIN, 2, out); // the replay
    expect(asked).toEqual(['region:FR-IDF']);
    expect(report).toMatchObject({ restored: 1, learned: 0, verdicts: [] });
    run(second, 'region:FR-IDF', T0 + 40 * MIN, T0 + 45 * MIN, 20, out, report);
    expect(report.verdicts.map((v) => v.verdict.state)).toEqual(['fired']);
  });

  it('ignores what is not an ISO 3166 country or region, and resolves a quiet open alert at the wall clock', () => {
    const watch = new GeoWatch({ optionsFor: options, restore: () => undefined });
    const out = new Outbox();
    run(watch, 'country:not-a-code', T0, T0 + MIN, 2, out);
    run(watch, 'country:JP', T0, T0 + 40 * MIN, 2, out);
    run(watch, 'country:JP', T0 + 40 * MIN, T0 + 42 * MIN, 20, out);
    expect(watch.size).toBe(1);
    const report = emptyReport();
    watch.idle(T0 + 50 * MIN, 65_000, out, report);
    expect(report.verdicts.map((v) => v.verdict.state)).toEqual(['resolved']);
    expect(() => snapshotOf({ ...out.baselines[0]!.value!, means: [1] })).toThrow(RangeError);
  });
});
