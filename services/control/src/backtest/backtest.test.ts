import { describe, expect, it } from 'vitest';
import { Allowlist, compilePolicy } from '@banstream/core';
import type { CountedEvent } from '@banstream/engine';
import { checkPolicy } from '../policies/records.js';
import { Backtest, type BacktestInput } from './backtest.js';

const T0 = 1_700_000_000_000;

function policy(over: Record<string, unknown>) {
  const checked = checkPolicy({ id: 'p', key: ['ip'], threshold: { count: 20, interval: '1m' }, action: { type: 'ban', banDuration: '10m' }, ...over });
  if (!checked.ok) throw new Error(JSON.stringify(checked.errors));
  return compilePolicy(checked.spec);
}

function event(ip: string, t: number, extra: Partial<CountedEvent> = {}): CountedEvent {
  return { timestamp: t, ip, country: 'FR', region: null, asn: null, method: 'GET', host: 'shop.example', path: '/', route: null, status: 200, userId: null, apiKeyHash: null, headers: {}, ...extra };
}

function run(input: Partial<BacktestInput> & Pick<BacktestInput, 'candidate'>, records: [number, CountedEvent[]][]) {
  const backtest = new Backtest({ graceMs: 5000, maxFutureMs: 60_000, subjectPartitions: 3, allowlist: new Allowlist(), ...input });
  records.forEach(([partition, events], offset) => backtest.record(partition, offset, Math.max(T0, ...events.map((e) => e.timestamp)), events));
  return backtest.report({ from: T0, to: T0 + 3_600_000 });
}

const burst = (ip: string, n: number, from = T0, extra: Partial<CountedEvent> = {}) => Array.from({ length: n }, (_, i) => event(ip, from + i * 10, extra));

describe('Backtest', () => {
  it('bans at the crossing event as the aggregator would, and counts what the ban refuses', () => {
    const report = run({ candidate: policy({}) }, [
      [0, burst('203.0.113.9', 30)],
      [1, burst('198.51.100.1', 5)],
    ]);
    expect(report).toMatchObject({ records: 2, events: 35, clients: 2 });
    expect(report.candidate.bans.list).toEqual([{ subject: 'ip:203.0.113.9', startedAt: T0 + 200, expiresAt: T0 + 200 + 600_000, evidenceCount: 21, escalationLevel: 0, preview: true, refused: 9 }]);
    expect(report.candidate.affected).toEqual({ requests: 9, requestShare: 0.257143, clients: 1, clientShare: 0.5 });
    expect(report.candidate.topPrefixes).toEqual([{ name: '203.0.113.0/24', requests: 9 }]);
    expect(report.candidate.topCountries).toEqual([{ name: 'FR', requests: 9 }]);
  });

  it('counts what a status-matched ban refuses among every request of the subject, as the enforcer applies it', () => {
    const candidate = policy({ match: { statuses: [401] }, threshold: { count: 5, interval: '1m' } });
    const failures = burst('203.0.113.9', 6, T0, { status: 401 });
    const afterwards = burst('203.0.113.9', 4, T0 + 1_000, { status: 200 });
    const report = run({ candidate }, [
      [0, failures],
      [0, afterwards],
    ]);
    expect(report.candidate.bans.list).toEqual([expect.objectContaining({ subject: 'ip:203.0.113.9', evidenceCount: 6, refused: 4 })]);
    expect(report.candidate.affected.requests).toBe(4);
  });

  it('estimates the excess share a throttle refuses', () => {
    const report = run({ candidate: policy({ action: { type: 'throttle' } }) }, [[0, burst('203.0.113.9', 40)]]);
    expect(report.candidate.bans.total).toBe(0);
    const [over] = report.candidate.overThreshold.list;
    expect(over).toMatchObject({ subject: 'ip:203.0.113.9', requestsOver: 20, peakCount: 40 });
    // Σ (1 - 20/c) for c = 21..40
    const expected = Array.from({ length: 20 }, (_, i) => 1 - 20 / (21 + i)).reduce((a, b) => a + b, 0);
    expect(over!.refused).toBeCloseTo(expected, 1);
  });

  it('counts subjects that span partitions after the repartition, as stage two does', () => {
    const candidate = policy({ key: ['user'], threshold: { count: 10, interval: '1m' } });
    const report = run({ candidate }, [
      [0, burst('203.0.113.1', 6, T0, { userId: '42' })],
      [1, burst('198.51.100.1', 6, T0 + 100, { userId: '42' })],
      [2, burst('192.0.2.1', 6, T0 + 200, { userId: '42' })],
    ]);
    expect(report.candidate.bans.list.map((b) => [b.subject, b.evidenceCount])).toEqual([['user:42', 12]]);
  });

  it('never bans an allowlisted subject and skips late and invalid events', () => {
    const allowlist = new Allowlist();
    allowlist.add({ entry: '203.0.113.9' });
    const late = [...burst('198.51.100.7', 5, T0 + 60_000), event('198.51.100.7', T0)];
    const report = run({ candidate: policy({}), allowlist }, [
      [0, burst('203.0.113.9', 30)],
      [1, late],
      [2, [event('not-an-ip', T0)]],
    ]);
    expect(report.candidate.bans.total).toBe(0);
    expect(report.candidate.late).toBe(1);
    expect(report.invalidEvents).toBe(1);
  });

  it('compares with the active version: who only one of them bans', () => {
    const active = { policy: policy({ threshold: { count: 50, interval: '1m' } }), version: 3 };
    const report = run({ candidate: policy({}), active }, [
      [0, burst('203.0.113.9', 30)],
      [1, burst('198.51.100.2', 60)],
    ]);
    expect(report.active).toMatchObject({ version: 3, bans: { total: 1 } });
    expect(report.comparison).toMatchObject({ bannedOnlyByCandidate: ['ip:203.0.113.9'], bannedOnlyByActive: [], bannedByBoth: 1 });
  });
});
