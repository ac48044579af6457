import { describe, expect, it } from 'vitest';
import { Allowlist, attributesFromRequest, PolicyBook, type RequestInput } from '@banstream/core';
import type { Ban, PolicyRecord } from '@banstream/schemas';
import { BanCache } from './cache/ban-cache.js';
import { CountCache } from './cache/count-cache.js';
import { decideLocally, type LocalState } from './decide.js';

const NOW = 1_000_000;

function policy(id: string, spec: Record<string, unknown>): PolicyRecord {
  return { id, version: 1, description: '', owner: 'test', mode: 'enforce', enabled: true, definition: JSON.stringify(spec), updatedBy: 'test', updatedAt: 0 };
}

function ban(subject: string, policyId = 'p'): Ban {
  return {
    banId: `ban of ${subject}`,
    subject,
    policyId,
    reason: 'r',
    evidenceCount: 1,
    windowSeconds: 60,
    startedAt: 0,
    expiresAt: NOW + 60_000,
    preview: false,
    escalationLevel: 0,
    origin: 'aggregator',
    httpStatus: 403,
    createdBy: null,
  };
}

function state(policies: Record<string, Record<string, unknown>> = {}): LocalState {
  const book = new PolicyBook();
  for (const [id, spec] of Object.entries(policies)) expect(book.apply(id, policy(id, spec)).kind).toBe('applied');
  return { bans: new BanCache(), counts: new CountCache(), allowlist: new Allowlist(), policies: book };
}

const request = (overrides: Partial<RequestInput> = {}) => attributesFromRequest({ ip: '192.0.2.7', method: 'GET', host: 'shop.example', path: '/login', ...overrides }, NOW);
const never = () => 0.99;

describe('decideLocally', () => {
  it('finds nothing for a clean request', () => {
    const decision = decideLocally(state(), request(), NOW, never);
    expect(decision.candidates).toEqual([]);
    expect(decision.hard).toEqual([]);
    expect(decision.allowlisted).toBeUndefined();
  });

  it('denies by every ban that applies, in order: address, user, API key, networks, then ban policies', () => {
    const s = state({ 'by-path': { key: ['ip', 'path'], match: { paths: ['/login'] }, threshold: { count: 5, interval: '1m' }, action: { type: 'ban', banDuration: '1h' } } });
    // An API-key subject holds 32 hex digits of the SHA-256, as compileKey and the control API write it.
    const key = attributesFromRequest({ ip: '192.0.2.7', method: 'GET', host: 'h', path: '/', apiKey: 'k' }, NOW).apiKeyHash!.slice(0, 32);
    for (const subject of ['ip:192.0.2.7', 'user:42', `apikey:${key}`, 'cidr:192.0.2.0/24', 'ip:192.0.2.7|path:/login']) s.bans.observe(subject, ban(subject, subject));
    const decision = decideLocally(s, request({ userId: '42', apiKey: 'k' }), NOW, never);
    expect(decision.candidates.map((c) => c.policyId)).toEqual(['ip:192.0.2.7', 'user:42', `apikey:${key}`, 'cidr:192.0.2.0/24', 'ip:192.0.2.7|path:/login']);
    expect(decision.candidates.every((c) => c.source === 'ban' && c.deny && c.status === 403 && c.retryAfterSeconds === 60)).toBe(true);
  });

  it('denies once by a ban that two subjects reach (a user ban, and a ban policy keyed on the user)', () => {
    const s = state({ 'by-user': { key: ['user'], threshold: { count: 5, interval: '1m' }, action: { type: 'ban', banDuration: '1h' } } });
    s.bans.observe('user:42', ban('user:42'));
    expect(decideLocally(s, request({ userId: '42' }), NOW, never).candidates).toHaveLength(1);
  });

  it('returns the hard policies to check in Redis, and a decision without any has none', () => {
    const hard = { threshold: { count: 5, interval: '1m' }, action: { type: 'throttle' }, enforcement: { type: 'hard', failureMode: 'open' } };
    const s = state({ a: { ...hard, key: ['ip'] }, b: { ...hard, key: ['user'], match: { paths: ['/login'] } } });
    const both = decideLocally(s, request({ userId: '42' }), NOW, never);
    expect(both.hard.map((h) => [h.policy.id, h.subject])).toEqual([
      ['a', 'ip:192.0.2.7'],
      ['b', 'user:42'],
    ]);
    const none = decideLocally(state(), request(), NOW, never);
    expect(none.hard).toEqual([]);
    expect(decideLocally(s, request({ path: '/other' }), NOW, never).hard.map((h) => h.policy.id)).toEqual(['a']);
  });

  it('lets an allowlisted request through whatever its bans', () => {
    const s = state();
    s.bans.observe('ip:192.0.2.7', ban('ip:192.0.2.7'));
    s.allowlist.add({ entry: 'ip:192.0.2.7', reason: 'office', addedBy: 'test' });
    const decision = decideLocally(s, request(), NOW, never);
    expect(decision.allowlisted?.entry).toBe('ip:192.0.2.7');
    expect(decision.candidates).toEqual([]);
  });

  it('throttles the excess share of a subject over its shared count, and gives the quota left', () => {
    const s = state({ api: { key: ['ip'], match: { pathPrefixes: ['/api/'] }, threshold: { count: 100, interval: '1m' }, action: { type: 'throttle' } } });
    s.counts.observe('api|ip:192.0.2.7', { policyId: 'api', subject: 'ip:192.0.2.7', count: 200, windowSeconds: 60, observedAt: NOW - 1_000, final: false } as never);
    const refused = decideLocally(s, request({ path: '/api/items' }), NOW, () => 0.1);
    expect(refused.candidates).toMatchObject([{ source: 'throttle', policyId: 'api', deny: true, limit: 100, remaining: 0 }]);
    expect(refused.quota).toEqual({ policyId: 'api', limit: 100, remaining: 0, windowSeconds: 60 });
    expect(decideLocally(s, request({ path: '/api/items' }), NOW, never).candidates).toEqual([]);
  });

  describe('a ban policy over its threshold, not yet banned (Cloud Armor rate_based_ban)', () => {
    const count = (policyId: string, value: number) => ({ policyId, subject: 'ip:192.0.2.7', count: value, windowSeconds: 60, observedAt: NOW - 1_000, final: false }) as never;
    const banPolicy = (action: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
      state({ login: { key: ['ip'], threshold: { count: 100, interval: '1m' }, action: { type: 'ban', banThreshold: { count: 500, interval: '1m' }, banDuration: '1h', ...action }, ...extra } });

    it('denies the excess share by default, with the ban status, and nothing at or under the threshold', () => {
      const s = banPolicy({});
      s.counts.observe('login|ip:192.0.2.7', count('login', 200));
      const refused = decideLocally(s, request(), NOW, () => 0.1);
      expect(refused.candidates).toMatchObject([{ source: 'throttle', policyId: 'login', deny: true, status: 403, preview: false, limit: 100, remaining: 0 }]);
      expect(refused.candidates[0]!.reason).toContain('50%');
      // Half the requests pass: a draw above the excess share (1 - 100/200) is admitted.
      expect(decideLocally(s, request(), NOW, never).candidates).toEqual([]);
      s.counts.observe('login|ip:192.0.2.7', count('login', 100));
      expect(decideLocally(s, request(), NOW, () => 0).candidates).toEqual([]);
    });

    it('denies every request over the threshold with exceed: all, and none with exceed: none', () => {
      const all = banPolicy({ exceed: 'all', status: 429 });
      all.counts.observe('login|ip:192.0.2.7', count('login', 101));
      expect(decideLocally(all, request(), NOW, never).candidates).toMatchObject([{ source: 'throttle', policyId: 'login', deny: true, status: 429 }]);
      const none = banPolicy({ exceed: 'none' });
      none.counts.observe('login|ip:192.0.2.7', count('login', 10_000));
      expect(decideLocally(none, request(), NOW, () => 0).candidates).toEqual([]);
    });

    it('marks the exceed denial as preview for a policy in preview mode', () => {
      const s = banPolicy({ exceed: 'all' });
      s.policies.apply('login', {
        ...policy('login', { key: ['ip'], threshold: { count: 100, interval: '1m' }, action: { type: 'ban', exceed: 'all', banDuration: '1h' } }),
        version: 2,
        mode: 'preview',
      });
      s.counts.observe('login|ip:192.0.2.7', count('login', 150));
      expect(decideLocally(s, request(), NOW, never).candidates).toMatchObject([{ source: 'throttle', policyId: 'login', deny: true, preview: true }]);
    });

    it('applies to a ban policy on a composite subject beside the ban lookup', () => {
      const s = state({
        'by-path': { key: ['ip', 'path'], threshold: { count: 5, interval: '1m' }, action: { type: 'ban', exceed: 'all', banThreshold: { count: 50, interval: '1m' }, banDuration: '1h' } },
      });
      s.counts.observe('by-path|ip:192.0.2.7|path:/login', { policyId: 'by-path', subject: 'ip:192.0.2.7|path:/login', count: 6, windowSeconds: 60, observedAt: NOW - 1_000, final: false } as never);
      expect(decideLocally(s, request(), NOW, never).candidates).toMatchObject([{ source: 'throttle', policyId: 'by-path', deny: true }]);
      expect(decideLocally(s, request({ path: '/other' }), NOW, never).candidates).toEqual([]);
    });
  });
});
