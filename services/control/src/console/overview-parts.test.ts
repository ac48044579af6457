import { describe, expect, it } from 'vitest';
import type { GeoAlert, WindowCount } from '@banstream/schemas';
import { HotCounts } from './hot-counts.js';
import { metricsView } from './metrics-scrape.js';
import { MinuteCounter } from './minute-counter.js';
import { openAlerts } from './open-alerts.js';
import { parseSamples } from './prom-text.js';

describe('MinuteCounter', () => {
  it('counts what happened in the last 60 s, not older, not in the future', () => {
    const c = new MinuteCounter();
    const now = 1_000_000;
    c.add(now - 59_000, now);
    c.add(now - 1_000, now, 3);
    c.add(now - 61_000, now);
    c.add(now + 5_000, now);
    expect(c.lastMinute(now)).toBe(4);
    expect(c.lastMinute(now + 2_000)).toBe(3);
    expect(c.lastMinute(now + 120_000)).toBe(0);
  });

  it('reuses a bucket a minute later without keeping the old count', () => {
    const c = new MinuteCounter();
    c.add(10_000, 10_000, 5);
    c.add(70_000, 70_000, 1);
    expect(c.lastMinute(70_000)).toBe(1);
  });
});

describe('HotCounts', () => {
  const count = (subject: string, n: number, over: Partial<WindowCount> = {}): WindowCount => ({
    policyId: 'p',
    subject,
    kind: 'subject',
    count: n,
    windowSeconds: 60,
    threshold: 100,
    observedAt: 1_000,
    final: false,
    ...over,
  });

  it('ranks subjects by share of their threshold, drops cooled and stale ones', () => {
    const hot = new HotCounts(100);
    hot.apply('p|a', count('ip:a', 50));
    hot.apply('p|b', count('ip:b', 95));
    hot.apply('q|c', count('ip:c', 9, { policyId: 'q', threshold: 10 }));
    hot.apply('p|d', count('ip:d', 80));
    hot.apply('p|d', null);
    hot.apply('geo|country:FR', count('country:FR', 1000, { kind: 'country' }));
    expect(hot.nearest(2, 2_000).map((n) => [n.subject, n.share])).toEqual([
      ['ip:b', 0.95],
      ['ip:c', 0.9],
    ]);
    expect(hot.nearest(10, 62_000)).toEqual([]);
    expect(hot.size).toBe(0);
  });

  it('keeps at most its capacity', () => {
    const hot = new HotCounts(2);
    for (const s of ['a', 'b', 'c']) hot.apply(`p|${s}`, count(s, 10));
    expect(hot.size).toBe(2);
    expect(hot.dropped).toBe(1);
  });
});

describe('metrics', () => {
  const text = (events: number, bans: number) =>
    [
      '# HELP banstream_enforcer_decisions_total Decisions',
      '# TYPE banstream_enforcer_decisions_total counter',
      `banstream_enforcer_decisions_total{source="ban",result="deny"} ${bans}`,
      'banstream_enforcer_decisions_total{source="none",result="allow"} 1000',
      `banstream_aggregator_events_consumed_total{replay="false"} ${events}`,
      'banstream_aggregator_events_consumed_total{replay="true"} 5000',
      'banstream_aggregator_geo_rate{country="FR"} 12.5',
      'banstream_aggregator_geo_baseline_rate{country="FR"} 10',
      'banstream_other_total{x="y"} 3',
    ].join('\n');

  it('parses only the wanted samples, with their labels', () => {
    const samples = parseSamples(text(1, 2), new Set(['banstream_enforcer_decisions_total']));
    expect(samples).toEqual([
      { name: 'banstream_enforcer_decisions_total', labels: { source: 'ban', result: 'deny' }, value: 2 },
      { name: 'banstream_enforcer_decisions_total', labels: { source: 'none', result: 'allow' }, value: 1000 },
    ]);
    expect(parseSamples('a{b="c\\"d"} 1\nnot a sample\nx NaN', new Set(['a', 'x']))).toEqual([{ name: 'a', labels: { b: 'c"d' }, value: 1 }]);
  });

  it('turns counters into rates between two reads, live events only, and reads gauges from the latest', () => {
    const all = new Set(['banstream_enforcer_decisions_total', 'banstream_aggregator_events_consumed_total', 'banstream_aggregator_geo_rate', 'banstream_aggregator_geo_baseline_rate']);
    const before = { at: 0, samples: parseSamples(text(100, 10), all) };
    const after = { at: 2_000, samples: parseSamples(text(300, 50), all) };
    expect(metricsView([{ before, after }], [after])).toEqual({
      eventsPerSecond: 100,
      denials: [{ source: 'ban', perSecond: 20 }],
      geo: [{ country: 'FR', rate: 12.5, baseline: 10 }],
    });
    // A restarted source (counters went down) says nothing until its next read.
    expect(metricsView([{ before: after, after: { at: 4_000, samples: parseSamples(text(5, 1), all) } }], []).eventsPerSecond).toBeNull();
  });
});

describe('openAlerts', () => {
  const alert = (code: string, state: 'fired' | 'resolved', at: number): GeoAlert =>
    ({ alertId: `${code}-${at}`, scope: 'country', code, state, currentRate: 1, baselineRate: 1, zScore: 1, at }) as GeoAlert;

  it('keeps a country whose latest alert fired', () => {
    const recent = [alert('FR', 'resolved', 5), alert('DE', 'fired', 4), alert('FR', 'fired', 3), alert('DE', 'resolved', 2)];
    expect(openAlerts(recent, 10).map((a) => a.code)).toEqual(['DE']);
  });
});
