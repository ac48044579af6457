import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { Ban } from '@banstream/schemas';
import { searchBans, type BanQuery } from './ban-search.js';

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
    // The start of the subject or of its value: not any part of it.
    expect(subjects({ subject: 'user:4', limit: 10 })).toEqual(['user:42']);
    expect(subjects({ subject: '42', limit: 10 })).toEqual(['user:42']);
    expect(subjects({ subject: '113.9', limit: 10 })).toEqual([]);
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

/** The first implementation: filter, sort everything, find the cursor. The one-pass search must answer exactly as it does. */
function referenceSearch(bans: Iterable<Ban>, query: BanQuery, nowMs: number): { bans: Ban[]; total: number; next: string | null } {
  const matching: Ban[] = [];
  for (const b of bans) {
    if (!query.includeExpired && b.expiresAt <= nowMs) continue;
    if (query.scope !== undefined && !b.subject.startsWith(`${query.scope}:`)) continue;
    if (query.subject !== undefined && !(b.subject.startsWith(query.subject) || b.subject.slice(b.subject.indexOf(':') + 1).startsWith(query.subject))) continue;
    if (query.policy !== undefined && b.policyId !== query.policy) continue;
    if (query.origin !== undefined && b.origin !== query.origin) continue;
    matching.push(b);
  }
  matching.sort((a, b) => (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0));
  const from = query.after === undefined ? 0 : matching.findIndex((b) => b.subject > query.after!);
  const page = from < 0 ? [] : matching.slice(from, from + query.limit);
  const more = from >= 0 && from + query.limit < matching.length;
  return { bans: page, total: matching.length, next: more ? page[page.length - 1]!.subject : null };
}

describe('searchBans against the sort-everything reference', () => {
  const subject = fc.oneof(
    fc.tuple(fc.constantFrom('ip', 'cidr', 'user', 'apikey'), fc.string({ maxLength: 6 })).map(([s, v]) => `${s}:${v}`),
    fc.string({ maxLength: 8 }),
  );
  const banArb = fc.record({ subject, policyId: fc.constantFrom('p', 'q', 'manual'), origin: fc.constantFrom('aggregator', 'manual'), expiresAt: fc.integer({ min: 0, max: 200 }) });
  const queryArb = fc.record(
    {
      scope: fc.constantFrom('ip', 'user', 'x'),
      subject: fc.string({ maxLength: 3 }),
      policy: fc.constantFrom('p', 'manual'),
      origin: fc.constantFrom('aggregator', 'manual'),
      includeExpired: fc.boolean(),
      after: fc.oneof(subject, fc.string({ maxLength: 4 })),
    },
    { requiredKeys: [] },
  );

  it('answers the same page, total and cursor, and paging through gives every match once', () => {
    fc.assert(
      fc.property(fc.array(banArb, { maxLength: 60 }), queryArb, fc.integer({ min: 1, max: 12 }), (fields, q, limit) => {
        // Subjects are keys of the bans map: unique.
        const unique = new Map(fields.map((f) => [f.subject, ban(f.subject, f)]));
        const bans = [...unique.values()];
        const query = { ...q, limit };
        expect(searchBans(bans, query, 100)).toEqual(referenceSearch(bans, query, 100));
        const { after: _after, ...fromStart } = query;
        const seen: string[] = [];
        let cursor: string | undefined;
        for (let i = 0; i < 100; i++) {
          const page = searchBans(bans, cursor === undefined ? fromStart : { ...fromStart, after: cursor }, 100);
          seen.push(...page.bans.map((b) => b.subject));
          if (page.next === null) break;
          cursor = page.next;
        }
        expect(seen).toEqual(referenceSearch(bans, { ...fromStart, limit: 1_000_000 }, 100).bans.map((b) => b.subject));
      }),
      { numRuns: 3000 },
    );
  });
});
