import { describe, expect, it } from 'vitest';
import { attributesFromRequest, type RequestAttributes } from '../subjects/index.js';
import { compilePolicy } from './compile.js';
import { parsePolicyText } from './load.js';
import { applicablePolicies } from './resolve.js';

const POLICIES = `
policies:
  - id: login-bruteforce
    mode: enforce
    match: { methods: [POST], paths: [/login], statuses: [401, 403] }
    key: [prefix]
    threshold: { count: 20, interval: 5m }
    action: { type: ban, banThreshold: { count: 50, interval: 5m }, banDuration: 1h, status: 403 }
    escalation: { multiplier: 2, maxDuration: 1d, decayAfter: 7d }
  - id: api-default
    group: api
    mode: enforce
    key: [apikey]
    threshold: { count: 100, interval: 1m }
    action: { type: throttle }
    enforcement: { type: async, failureMode: local }
  - id: api-acme
    group: api
    priority: 10
    mode: enforce
    match: { subjects: ["apikey:${'a'.repeat(32)}"] }
    key: [apikey]
    threshold: { count: 5000, interval: 1m }
    action: { type: throttle }
  - id: signup-hard
    key: [ip]
    threshold: { count: 5, interval: 1d }
    action: { type: throttle, status: 429 }
    enforcement: { type: hard, failureMode: local }
  - id: night-geo
    key: [country]
    match: { countries: [FR] }
    schedule: { timeZone: Europe/Paris, from: "01:00", to: "06:00" }
    threshold: { count: 1000, interval: 1m }
    action: { type: alert }
`;

const request = (r: Partial<Parameters<typeof attributesFromRequest>[0]> = {}): RequestAttributes =>
  attributesFromRequest({ ip: '203.0.113.7', method: 'POST', host: 'shop.example', path: '/login', headers: {}, timestamp: Date.UTC(2026, 5, 1, 12), ...r });

describe('compilePolicy on a parsed policy file', () => {
  const policies = parsePolicyText(POLICIES, 'yaml').policies.map(compilePolicy);
  const byId = Object.fromEntries(policies.map((p) => [p.id, p]));

  it('applies defaults and converts durations', () => {
    expect(byId['login-bruteforce']).toMatchObject({
      mode: 'enforce',
      group: 'login-bruteforce',
      priority: 0,
      threshold: { count: 20, intervalMs: 300_000 },
      action: { type: 'ban', status: 403, exceed: 'excess', banThreshold: { count: 50, intervalMs: 300_000 }, banDurationMs: 3_600_000 },
      escalation: { multiplier: 2, maxDurationMs: 86_400_000, decayAfterMs: 604_800_000 },
      // What decides while an enforcer's caches load: closed unless the policy says otherwise.
      enforcement: { type: 'async', failureMode: 'closed' },
    });
    expect(byId['api-default']!.enforcement).toEqual({ type: 'async', failureMode: 'local' });
    expect(byId['signup-hard']).toMatchObject({ mode: 'preview', enforcement: { type: 'hard', failureMode: 'local', algorithm: 'sliding-window' } });
  });

  it('counts failed logins per /24 only', () => {
    const login = byId['login-bruteforce']!;
    expect(login.matches(request())).toBe(false); // the enforcer asks before a status exists
    const failed = { ...request(), status: 401 };
    expect(login.matches(failed)).toBe(true);
    expect(login.matches({ ...failed, status: 200 })).toBe(false);
    expect(login.subjectOf(failed)).toBe('cidr:203.0.113.0/24');
  });

  it('applies the failed-logins policy at check time to every login of the network, whatever its outcome', () => {
    const login = byId['login-bruteforce']!;
    expect(login.byStatus).toBe(true);
    for (const status of [undefined, 200, 401]) expect(login.matchesAtCheck({ ...request(), status })).toBe(true);
    expect(login.matchesAtCheck({ ...request(), method: 'GET' })).toBe(false);
    expect(byId['signup-hard']!.byStatus).toBe(false);
  });

  it('lets a merchant override replace the default API limit', () => {
    const acme = { ...request(), apiKeyHash: 'a'.repeat(64) };
    const other = { ...request(), apiKeyHash: 'b'.repeat(64) };
    expect(applicablePolicies(policies, acme).map((p) => p.id)).toContain('api-acme');
    expect(applicablePolicies(policies, acme).map((p) => p.id)).not.toContain('api-default');
    expect(applicablePolicies(policies, other).map((p) => p.id)).toContain('api-default');
  });

  it('applies a scheduled policy only inside its local hours', () => {
    const night = byId['night-geo']!;
    const fr = (utcHour: number) => ({ ...request({ timestamp: Date.UTC(2026, 0, 15, utcHour) }), country: 'FR' });
    expect(night.matches(fr(1))).toBe(true); // 02:00 in Paris (UTC+1 in winter)
    expect(night.matches(fr(5))).toBe(false); // 06:00 in Paris
    expect(night.subjectOf(fr(1))).toBe('country:FR');
    expect(night.matchesAtCheck(fr(1))).toBe(true);
    expect(night.matchesAtCheck(fr(5))).toBe(false);
  });
});
