import { describe, expect, it } from 'vitest';
import type { CompiledPolicy } from './compiled.js';
import { applicablePolicies } from './resolve.js';

type Req = { apiKey: string; path: string };

function policy(id: string, p: Partial<CompiledPolicy<Req>> = {}): CompiledPolicy<Req> {
  return {
    id,
    mode: 'enforce',
    enabled: true,
    group: id,
    priority: 0,
    threshold: { count: 100, intervalMs: 60_000 },
    action: { type: 'throttle', status: 429 },
    enforcement: { type: 'async', failureMode: 'closed' },
    matches: () => true,
    matchesAtCheck: () => true,
    byStatus: false,
    costOf: () => 1,
    subjectOf: (r) => `apikey:${r.apiKey}`,
    spec: { id, key: ['apikey'], threshold: { count: 100, interval: '1m' }, action: { type: 'throttle' } },
    ...p,
  };
}

describe('applicablePolicies', () => {
  const defaultLimit = policy('api-default', { group: 'api' });
  const merchantOverride = policy('api-merchant-acme', { group: 'api', priority: 10, subjects: new Set(['apikey:acme']), threshold: { count: 5_000, intervalMs: 60_000 } });
  const login = policy('login', { matches: (r) => r.path === '/login' });

  it('replaces the default limit with the override for that subject only', () => {
    const all = [defaultLimit, merchantOverride, login];
    expect(applicablePolicies(all, { apiKey: 'acme', path: '/x' }).map((p) => p.id)).toEqual(['api-merchant-acme']);
    expect(applicablePolicies(all, { apiKey: 'other', path: '/x' }).map((p) => p.id)).toEqual(['api-default']);
    expect(
      applicablePolicies(all, { apiKey: 'other', path: '/login' })
        .map((p) => p.id)
        .sort(),
    ).toEqual(['api-default', 'login']);
  });

  it('skips disabled and non-matching policies, and breaks ties by id', () => {
    const a = policy('b-second', { group: 'g' });
    const b = policy('a-first', { group: 'g' });
    expect(applicablePolicies([a, b], { apiKey: 'k', path: '/' }).map((p) => p.id)).toEqual(['a-first']);
    expect(applicablePolicies([policy('off', { enabled: false })], { apiKey: 'k', path: '/' })).toEqual([]);
  });

  it('at check time, matches without status conditions and keeps status-matched policies out of the competition', () => {
    type R = Req & { status?: number };
    const failures = policy('failures', {
      group: 'login',
      priority: 10,
      byStatus: true,
      matches: (r: R) => r.path === '/login' && r.status === 401,
      matchesAtCheck: (r: R) => r.path === '/login',
    });
    const rate = policy('rate', { group: 'login', matches: (r) => r.path === '/login', matchesAtCheck: (r) => r.path === '/login' });
    const all = [failures, rate];
    expect(applicablePolicies<R>(all, { apiKey: 'k', path: '/login', status: 401 }).map((p) => p.id)).toEqual(['failures']);
    expect(applicablePolicies<R>(all, { apiKey: 'k', path: '/login', status: 200 }).map((p) => p.id)).toEqual(['rate']);
    expect(applicablePolicies<R>(all, { apiKey: 'k', path: '/login' }, true).map((p) => p.id)).toEqual(['rate', 'failures']);
    expect(applicablePolicies<R>(all, { apiKey: 'k', path: '/home' }, true)).toEqual([]);
  });
});
