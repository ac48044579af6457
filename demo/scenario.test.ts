import { describe, expect, it } from 'vitest';
import { activeAttacks, COUNTRIES, DEMO_SCENARIO, demoPolicies, eventOf, historyRanges, localHour, nightCountry, Scenario } from './scenario.js';

const options = { ...DEMO_SCENARIO, partitions: 6 };
const T0 = Date.UTC(2026, 10, 16, 0, 0, 0);

describe('demo scenario', () => {
  it('is the same traffic for the same seed and calls', () => {
    // As the driver asks: a slice at a time (a slice's attacks are those running at its start).
    const run = (s: Scenario) => Array.from({ length: 30 }, (_, i) => s.between(T0 + 10_000 + i * 1000, T0 + 11_000 + i * 1000)).flat();
    const a = run(new Scenario(options, T0));
    const b = run(new Scenario(options, T0));
    expect(a).toEqual(b);
    expect(new Set(a.map((r) => r.cls))).toEqual(new Set(['legit', 'flood', 'botnet', 'spike']));
  });

  it('keeps every legitimate client far below the policies: at most a third of a threshold over a day of traffic', () => {
    const [flood, login] = demoPolicies();
    const scenario = new Scenario(options, T0);
    const perIp = new Map<string, number>();
    const failedPerNet = new Map<string, number>();
    let requests = 0;
    for (let t = T0; t < T0 + 86_400_000; t += 10_000) {
      for (const r of scenario.legit(t, t + 10_000)) {
        requests++;
        // Fixed buckets: a sliding window holds at most two of them.
        const ipKey = `${r.ip}@${Math.floor(r.at / 10_000)}`;
        perIp.set(ipKey, (perIp.get(ipKey) ?? 0) + 1);
        if (eventOf(r, 'x').status === 401) {
          const netKey = `${r.ip.split('.').slice(0, 3).join('.')}@${Math.floor(r.at / 60_000)}`;
          failedPerNet.set(netKey, (failedPerNet.get(netKey) ?? 0) + 1);
        }
      }
    }
    expect(requests).toBeGreaterThan(100_000);
    const max = (m: Map<string, number>) => [...m.values()].reduce((x, y) => Math.max(x, y), 0);
    expect(2 * max(perIp)).toBeLessThanOrEqual(flood!.threshold.count / 3);
    expect(2 * max(failedPerNet)).toBeLessThanOrEqual(login!.threshold.count / 3);
  });

  it('always finds a country in its night for the spike', () => {
    for (let t = T0; t < T0 + 7 * 86_400_000; t += 3_600_000) {
      const c = nightCountry(t);
      expect(localHour(t, c.zone), `${new Date(t).toISOString()} ${c.code}`).toBeLessThan(6);
    }
    expect(COUNTRIES.length).toBeGreaterThanOrEqual(10);
  });

  it('schedules the attacks in phases that repeat', () => {
    expect([...activeAttacks(DEMO_SCENARIO.phases, 5_000)]).toEqual([]);
    expect([...activeAttacks(DEMO_SCENARIO.phases, 35_000)]).toEqual(['flood', 'botnet', 'spike']);
    expect([...activeAttacks(DEMO_SCENARIO.phases, 180_000 + 15_000)]).toEqual(['flood']);
  });

  it('publishes history from the hour a week ago, then from the start of this hour, never from inside an hour after silence', () => {
    const HOUR = 3_600_000;
    const now = Date.UTC(2026, 10, 23, 17, 41, 12);
    const ranges = historyRanges(now, 1);
    expect(ranges).toEqual([
      [Date.UTC(2026, 10, 16, 17), Date.UTC(2026, 10, 16, 19)],
      [Date.UTC(2026, 10, 23, 17), now],
    ]);
    for (const [from] of ranges) expect(from % HOUR).toBe(0);
  });

  it('starts both ranges an hour earlier in the first minutes of an hour, so the recent one is never seconds long', () => {
    const now = Date.UTC(2026, 10, 25, 3, 0, 20);
    expect(historyRanges(now, 1)).toEqual([
      [Date.UTC(2026, 10, 18, 2), Date.UTC(2026, 10, 18, 5)],
      [Date.UTC(2026, 10, 25, 2), now],
    ]);
    const later = Date.UTC(2026, 10, 25, 3, 5, 0);
    expect(historyRanges(later, 1)).toEqual([
      [Date.UTC(2026, 10, 18, 3), Date.UTC(2026, 10, 18, 5)],
      [Date.UTC(2026, 10, 25, 3), later],
    ]);
  });
});
