import { describe, expect, it } from 'vitest';
import type { Ban } from '@banstream/schemas';
import { searchBans } from './ban-search.js';

const ban = (subject: string, over: Partial<Ban> = {}): Ban => ({
  banId: subject,
  subject,
  policyId: 'p',
  reason: 'r',
  evidenceCount: 1,
  windowSeconds: 60,
  startedAt: 0,
  expiresAt: 1000,
  preview: false,
  escalationLevel: 0,
  origin: 'aggregator',
  httpStatus: 403,
  createdBy: null,
  ...over,
});

describe('searchBans', () => {
  const all = [
    ban('ip:203.0.113.9'),
    ban('ip:203.0.113.10', { origin: 'manual', policyId: 'manual' }),
    ban('cidr:198.51.100.0/24'),
    ban('user:42', { policyId: 'login' }),
    ban('ip:192.0.2.1', { expiresAt: 10 }),
  ];

  it('filters by scope, subject text, policy and origin, live bans only unless asked', () => {
    const subjects = (q: Parameters<typeof searchBans>[1]) => searchBans(all, q, 100).bans.map((b) => b.subject);
    expect(subjects({ limit: 10 })).toEqual(['cidr:198.51.100.0/24', 'ip:203.0.113.10', 'ip:203.0.113.9', 'user:42']);
    expect(subjects({ scope: 'ip', limit: 10 })).toEqual(['ip:203.0.113.10', 'ip:203.0.113.9']);
    expect(subjects({ subject: '203.0.113', origin: 'manual', limit: 10 })).toEqual(['ip:203.0.113.10']);
    expect(subjects({ policy: 'login', limit: 10 })).toEqual(['user:42']);
    expect(subjects({ scope: 'ip', includeExpired: true, limit: 10 })).toEqual(['ip:192.0.2.1', 'ip:203.0.113.10', 'ip:203.0.113.9']);
  });

  it('pages in subject order with a cursor', () => {
    const first = searchBans(all, { limit: 3 }, 100);
    expect(first).toMatchObject({ total: 4, next: 'ip:203.0.113.9' });
    const second = searchBans(all, { limit: 3, after: first.next! }, 100);
    expect(second.bans.map((b) => b.subject)).toEqual(['user:42']);
    expect(second.next).toBeNull();
  });
});
