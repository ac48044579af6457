import { describe, expect, it } from 'vitest';
import { Allowlist, compilePolicy } from '@banstream/core';
import { BanLedger } from './ban-ledger.js';
import { observe, observeKeyed, publishCounts, type DeciderContext } from './decider.js';
import { GeoCounts } from './geo-counts.js';
import { Outbox } from './outbox.js';
import { PartitionState } from './partition-state.js';

const T0 = Date.UTC(2026, 10, 22, 3, 0);
const banPolicy = compilePolicy({
  id: 'flood',
  mode: 'enforce',
  key: ['ip'],
  threshold: { count: 5, interval: '1m' },
  action: { type: 'ban', banDuration: '10m' },
  escalation: { multiplier: 2, maxDuration: '1d', decayAfter: '1d' },
});

function setup(now = T0) {
  const ctx: DeciderContext = { ledger: new BanLedger(), allowlist: new Allowlist(), nowMs: () => now };
  const state = new PartitionState(0, { graceMs: 1000, hotShare: 0.5, countIntervalMs: 100 });
  return { ctx, state, out: new Outbox() };
}

function send(env: ReturnType<typeof setup>, subject: string, n: number, from: number): void {
  for (let i = 0; i < n; i++) {
    const t = from + i;
    observe(env.ctx, env.state, banPolicy, subject, t, 1, env.state.advance(t), env.out);
  }
}

describe('observe', () => {
  it('bans once, on the event that crosses the threshold, and escalates a repeat offender', () => {
    const env = setup();
    send(env, 'ip:192.0.2.1', 20, T0);
    expect(env.out.bans).toHaveLength(1);
    const ban = env.out.bans[0]!.value!;
    expect(ban).toMatchObject({ subject: 'ip:192.0.2.1', evidenceCount: 6, startedAt: T0 + 5, expiresAt: T0 + 5 + 600_000, escalationLevel: 0 });
    send(env, 'ip:192.0.2.1', 10, T0 + 700_000);
    expect(env.out.bans).toHaveLength(2);
    expect(env.out.bans[1]!.value).toMatchObject({ escalationLevel: 1, expiresAt: T0 + 700_005 + 1_200_000 });
  });

  it("stops at the held ban only when it is this policy's and still running: another policy's ban does not spare the subject", () => {
    const env = setup();
    const other = { banId: 'b-other', subject: 'ip:192.0.2.1', policyId: 'other', reason: 'r', evidenceCount: 9, windowSeconds: 60, startedAt: T0 - 1, expiresAt: T0 + 86_400_000 };
    env.ctx.ledger.observe('ip:192.0.2.1', { ...other, preview: true, escalationLevel: 0, origin: 'aggregator', httpStatus: 403, createdBy: null, evidence: null });
    send(env, 'ip:192.0.2.1', 20, T0);
    // The preview ban of `other` is weaker than this enforced one: it is replaced, once.
    expect(env.out.bans.map((b) => [b.value?.policyId, b.value?.startedAt])).toEqual([['flood', T0 + 5]]);
    send(env, 'ip:192.0.2.1', 20, T0 + 600_005);
    expect(env.out.bans.map((b) => [b.value?.policyId, b.value?.startedAt, b.value?.escalationLevel])).toEqual([
      ['flood', T0 + 5, 0],
      ['flood', T0 + 600_010, 1],
    ]);
  });

  it('sends the history of a held ban again when its crossing is seen again past the committed offset (a replay after a crash), once', () => {
    // The first run: the ban and its history, as published.
    const first = setup();
    send(first, 'ip:192.0.2.1', 20, T0);
    expect(first.out.history).toHaveLength(1);
    const published = first.out.bans[0]!.value!;
    // The same events seen again, from a rebuilt partition state, with this ledger.
    const replay = (env: ReturnType<typeof setup>, live: boolean) => {
      const state = new PartitionState(0, { graceMs: 1000, hotShare: 0.5, countIntervalMs: 100 });
      for (let i = 0; i < 20; i++) observe(env.ctx, state, banPolicy, 'ip:192.0.2.1', T0 + i, 1, state.advance(T0 + i), env.out, live);
      return env.out;
    };
    const restarted = (live: boolean) => {
      // A restarted instance: the ban read from the topic.
      const env = setup();
      env.ctx.ledger.observe('ip:192.0.2.1', published);
      return replay(env, live);
    };
    const live = restarted(true);
    expect(live.bans).toHaveLength(0);
    expect(live.history.map((h) => h.value)).toEqual([{ subject: 'ip:192.0.2.1', action: 'ban', at: T0 + 5, actor: null, ban: published }]);
    // Records before the committed offset were published for, history and all: nothing again.
    expect(restarted(false).history).toHaveLength(0);
    // The instance that decided the ban (and read it back) sends its history once only, twice replayed.
    first.ctx.ledger.observe('ip:192.0.2.1', published);
    replay(first, true);
    expect(replay(first, true).history).toHaveLength(1);
    // A restarted instance sends it once, however often it replays the crossing.
    const again = setup();
    again.ctx.ledger.observe('ip:192.0.2.1', published);
    replay(again, true);
    expect(replay(again, true).history).toHaveLength(1);
  });

  it('counts a subject given as key prefix and value (observeKeyed) together with the same subject whole', () => {
    const env = setup();
    send(env, 'ip:192.0.2.1', 3, T0);
    for (let i = 0; i < 3; i++)
      observeKeyed(env.ctx, env.state, { policy: banPolicy, keyPrefix: 'flood|ip:' }, { rest: '192.0.2.1', timeMs: T0 + 10 + i, count: 1, watermark: env.state.advance(T0 + 10 + i) }, env.out);
    expect(env.out.bans).toHaveLength(1);
    expect(env.out.bans[0]!.value).toMatchObject({ subject: 'ip:192.0.2.1', evidenceCount: 6, startedAt: T0 + 12 });
    publishCounts(env.state, 'ip', T0, T0 + 12, env.out);
    expect(env.out.counts.map((c) => [c.key, c.value?.subject, c.value?.count])).toEqual([['flood|ip:192.0.2.1', 'ip:192.0.2.1', 6]]);
  });

  it("gives a ban its evidence: the window's first and last events and a sample of what the subject sent once hot", () => {
    const env = setup();
    const route = { policy: banPolicy, keyPrefix: 'flood|ip:' };
    const paths = ['/login', '/login', '/login', '/', '/login', '/login'];
    paths.forEach((path, i) => {
      const t = T0 + 1000 * i;
      const event = { path, method: 'POST', status: 401, userAgent: () => 'curl/8', edge: () => 'edge-1' };
      observeKeyed(env.ctx, env.state, route, { rest: '192.0.2.1', timeMs: t, count: 1, watermark: env.state.advance(t), event }, env.out);
    });
    expect(env.out.bans).toHaveLength(1);
    const ban = env.out.bans[0]!.value!;
    expect(ban.evidenceCount).toBe(6);
    // Hot from 3 of 5 (hotShare 0.5): the sample holds the 4 events from there.
    expect(ban.evidence).toEqual({
      firstEventAt: T0,
      lastEventAt: T0 + 5000,
      sampledEvents: 4,
      paths: [
        { value: '/login', count: 3 },
        { value: '/', count: 1 },
      ],
      methods: [{ value: 'POST', count: 4 }],
      statuses: [{ value: '401', count: 4 }],
      userAgents: [{ value: 'curl/8', count: 4 }],
      edges: [{ value: 'edge-1', count: 4 }],
    });
  });

  it('gives a ban decided from counts alone (no event at hand) its window times and no sample', () => {
    const env = setup();
    send(env, 'ip:192.0.2.3', 6, T0 + 30_000);
    expect(env.out.bans[0]!.value!.evidence).toEqual({ firstEventAt: T0 + 30_000, lastEventAt: T0 + 30_005, sampledEvents: 0, paths: [], methods: [], statuses: [], userAgents: [], edges: [] });
  });

  it('publishes nothing for an allowlisted subject, nor a ban already over by the clock', () => {
    const allowed = setup();
    allowed.ctx.allowlist.add({ entry: '192.0.2.0/24' });
    send(allowed, 'ip:192.0.2.1', 20, T0);
    expect(allowed.out.bans).toEqual([]);
    const replayed = setup(T0 + 3_600_000);
    send(replayed, 'ip:192.0.2.1', 20, T0);
    expect(replayed.out.bans).toEqual([]);
  });

  it('does not count late events, and publishes hot counts then a final record and tombstone', () => {
    const env = setup();
    send(env, 'ip:192.0.2.2', 4, T0 + 10_000);
    expect(observe(env.ctx, env.state, banPolicy, 'ip:192.0.2.2', T0, 1, env.state.watermark, env.out)).toBe('late');
    publishCounts(env.state, 'subject', 0, env.state.watermark, env.out);
    expect(env.out.counts.map((c) => c.value?.count)).toEqual([4]);
    publishCounts(env.state, 'subject', 1000, T0 + 200_000, env.out);
    expect(env.out.counts.slice(1).map((c) => [c.key, c.value?.final ?? 'tombstone'])).toEqual([
      ['flood|ip:192.0.2.2', true],
      ['flood|ip:192.0.2.2', 'tombstone'],
    ]);
  });
});

describe('GeoCounts', () => {
  it('publishes a window count per country and a count per UTC hour of the day', () => {
    const env = setup();
    const geo = new GeoCounts(60_000, 100);
    geo.add(env.state, 'country:FR', T0, 30);
    geo.add(env.state, 'country:FR', T0 + 1000, 12);
    geo.add(env.state, 'region:FR-IDF', T0 + 1000, 2);
    geo.publish(env.state, 0, T0 + 1000, env.out);
    const byKey = new Map(env.out.counts.map((c) => [c.key, c.value!]));
    expect(byKey.get('geo|country:FR')).toMatchObject({ kind: 'country', count: 42, windowSeconds: 60 });
    expect(byKey.get('geo|region:FR-IDF')).toMatchObject({ kind: 'region', count: 2 });
    expect(byKey.get('geo|country:FR#h03')).toMatchObject({ kind: 'hour-of-day', count: 42, windowSeconds: 3600 });
  });
});

describe('exact counting near a limit', () => {
  it('counts a partly expired bucket exactly once a subject is hot, so a client one under the limit is never banned', () => {
    const env = setup();
    // 100 per minute allowed (ban above 100): 95 requests 10 ms apart, then 6 more as the oldest 6 leave the window.
    const policy = compilePolicy({ id: 'edge', mode: 'enforce', key: ['ip'], threshold: { count: 100, interval: '1m' }, action: { type: 'ban', banDuration: '1h' } });
    for (let i = 0; i < 95; i++) observe(env.ctx, env.state, policy, 'ip:192.0.2.9', T0 + 14_000 + i * 10, 1, env.state.advance(T0 + 14_000 + i * 10), env.out);
    const at = T0 + 14_000 + 60_000 + 45;
    for (let i = 0; i < 6; i++) observe(env.ctx, env.state, policy, 'ip:192.0.2.9', at + i, 1, env.state.advance(at + i), env.out);
    // Exact count at the last event: 95 - 6 expired + 6 = 95 (≤ 100): no ban.
    expect(env.state.counter.estimate('edge|ip:192.0.2.9', 60_000, at + 5, 100)).toBe(95);
    expect(env.out.bans).toEqual([]);
  });
});
