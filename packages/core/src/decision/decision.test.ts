import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { CompiledPolicy } from '../policy/compiled.js';
import { banId, escalate, evaluateBan, historyAfter, resolveVerdict, throttleDenyRatio, throttleRetryAfterSeconds } from './index.js';
import type { Candidate } from './types.js';

const MIN = 60_000;
const HOUR = 60 * MIN;

function banPolicy(overrides: Partial<CompiledPolicy> = {}): CompiledPolicy {
  return {
    id: 'login-bruteforce',
    mode: 'enforce',
    enabled: true,
    group: 'login-bruteforce',
    priority: 0,
    threshold: { count: 10, intervalMs: MIN },
    action: { type: 'ban', status: 403, exceed: 'excess', banThreshold: { count: 20, intervalMs: MIN }, banDurationMs: 10 * MIN },
    enforcement: { type: 'async', failureMode: 'closed' },
    escalation: { multiplier: 2, maxDurationMs: HOUR, decayAfterMs: 24 * HOUR },
    matches: () => true,
    matchesAtCheck: () => true,
    byStatus: false,
    costOf: () => 1,
    subjectOf: () => 'ip:203.0.113.7',
    spec: { id: 'login-bruteforce', key: ['ip'], threshold: { count: 10, interval: '1m' }, action: { type: 'ban', banDuration: '10m' } },
    ...overrides,
  };
}

describe('evaluateBan (rate_based_ban)', () => {
  const base = { policy: banPolicy(), subject: 'cidr:203.0.113.0/24', atMs: 1_000_000 };

  it('bans only above the ban threshold', () => {
    expect(evaluateBan({ ...base, count: 20 })).toBeUndefined();
    const ban = evaluateBan({ ...base, count: 21 });
    expect(ban).toMatchObject({
      subject: 'cidr:203.0.113.0/24',
      policyId: 'login-bruteforce',
      evidenceCount: 21,
      windowMs: MIN,
      startedAt: 1_000_000,
      expiresAt: 1_000_000 + 10 * MIN,
      preview: false,
      escalationLevel: 0,
      status: 403,
      reason: '21 requests in 1m exceed the ban threshold of 20',
    });
  });

  it('gives the same id when the same events are replayed, and a different one for another cause', () => {
    expect(evaluateBan({ ...base, count: 25 })?.banId).toBe(evaluateBan({ ...base, count: 25 })?.banId);
    expect(banId('p', 's', 1)).not.toBe(banId('p', 's', 2));
    expect(banId('p', 's', 1)).not.toBe(banId('p', 't', 1));
    expect(banId('p', 's', 1)).toMatch(/^[A-Za-z0-9_-]{22}$/);
  });

  it('emits no second ban while one is active, and a new one after it expired', () => {
    expect(evaluateBan({ ...base, count: 30, activeBanExpiresAt: base.atMs + 1 })).toBeUndefined();
    expect(evaluateBan({ ...base, count: 30, activeBanExpiresAt: base.atMs })).toBeDefined();
  });

  it('marks preview bans', () => {
    expect(evaluateBan({ ...base, policy: banPolicy({ mode: 'preview' }), count: 99 })?.preview).toBe(true);
  });

  it('escalates repeat offenders and caps the duration', () => {
    let history;
    const durations: number[] = [];
    let at = 0;
    for (let i = 0; i < 5; i++) {
      const ban = evaluateBan({ ...base, atMs: at, count: 50, history })!;
      durations.push(ban.expiresAt - ban.startedAt);
      history = historyAfter(ban);
      at = ban.expiresAt + MIN;
    }
    expect(durations).toEqual([10 * MIN, 20 * MIN, 40 * MIN, HOUR, HOUR]);
  });

  it('does not ban for throttle or alert policies', () => {
    expect(evaluateBan({ ...base, policy: banPolicy({ action: { type: 'throttle', status: 429 } }), count: 1e6 })).toBeUndefined();
  });
});

describe('escalation decay', () => {
  const esc = { multiplier: 3, maxDurationMs: 100 * HOUR, decayAfterMs: 24 * HOUR };

  it('forgives one level per quiet decay period', () => {
    const history = { level: 3, lastBanEndsAt: 0 };
    expect(escalate(HOUR, esc, history, 1).level).toBe(4);
    expect(escalate(HOUR, esc, history, 24 * HOUR).level).toBe(3);
    expect(escalate(HOUR, esc, history, 48 * HOUR + 1).level).toBe(2);
    expect(escalate(HOUR, esc, history, 30 * 24 * HOUR).level).toBe(0);
    expect(escalate(HOUR, esc, history, 30 * 24 * HOUR).durationMs).toBe(HOUR);
  });

  it('never goes below the base nor above the cap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 1e10 }), (level, quiet) => {
        const { durationMs } = escalate(HOUR, esc, { level, lastBanEndsAt: 0 }, quiet);
        return durationMs >= HOUR && durationMs <= 100 * HOUR;
      }),
    );
  });

  it('is the base duration without an escalation block', () => {
    expect(escalate(HOUR, undefined, { level: 7, lastBanEndsAt: 0 }, 1)).toEqual({ level: 0, durationMs: HOUR });
  });
});

describe('throttle', () => {
  it('denies exactly the excess share so the admitted rate is the threshold', () => {
    expect(throttleDenyRatio(100, 100)).toBe(0);
    expect(throttleDenyRatio(400, 100)).toBe(0.75);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1e6 }), fc.integer({ min: 1, max: 1e6 }), (count, limit) => {
        const admitted = count * (1 - throttleDenyRatio(count, limit));
        return Math.abs(admitted - Math.min(count, limit)) < 1e-6 * count;
      }),
    );
  });

  it('suggests a retry after long enough for the window to shed the excess', () => {
    expect(throttleRetryAfterSeconds(50, 100, MIN)).toBe(0);
    expect(throttleRetryAfterSeconds(200, 100, MIN)).toBe(30);
  });
});

describe('resolveVerdict', () => {
  const deny = (c: Partial<Candidate>): Candidate => ({ source: 'throttle', policyId: 'p', deny: true, status: 429, preview: false, reason: 'r', ...c });

  it('lets the allowlist win over every ban and limit', () => {
    const v = resolveVerdict({ entry: 'cidr:10.0.0.0/8' }, [deny({ source: 'ban', status: 403 }), deny({ source: 'hard-limit' })]);
    expect(v).toMatchObject({ allowed: true, status: 200, source: 'allowlist', reason: 'allowlisted by cidr:10.0.0.0/8' });
  });

  it('reports preview denials without enforcing them', () => {
    const v = resolveVerdict(undefined, [deny({ preview: true, policyId: 'dry' }), deny({ deny: false, policyId: 'quiet' })]);
    expect(v.allowed).toBe(true);
    expect(v.previewDenies.map((c) => c.policyId)).toEqual(['dry']);
  });

  it('prefers a ban over a limit and keeps the longest retry-after', () => {
    const v = resolveVerdict(undefined, [
      deny({ source: 'throttle', policyId: 't', retryAfterSeconds: 30 }),
      deny({ source: 'ban', policyId: 'b', status: 403, retryAfterSeconds: 5 }),
      deny({ source: 'hard-limit', policyId: 'h', retryAfterSeconds: 60, limit: 5, remaining: 0 }),
    ]);
    expect(v).toMatchObject({ allowed: false, status: 403, source: 'ban', policyId: 'b', retryAfterSeconds: 60 });
  });
});
