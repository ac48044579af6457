import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { attributesFromRequest } from '../subjects/index.js';
import { applicablePolicies } from './resolve.js';
import type { PolicyRecord } from './record.js';
import { PolicyBook } from './book.js';

function record(id: string, definition: Record<string, unknown>): PolicyRecord {
  return { id, version: 1, description: 'd', owner: 'o', mode: 'enforce', enabled: true, definition: JSON.stringify(definition), updatedBy: 't', updatedAt: 0 };
}

const attrs = (path: string, status?: number, apiKey = 'k1') =>
  attributesFromRequest({ ip: '192.0.2.1', method: 'POST', host: 'shop.example', path, apiKey, ...(status === undefined ? {} : { status }) }, 0);

const failedLogins = { key: ['path'], match: { paths: ['/login'], statuses: [401] }, threshold: { count: 5, interval: '1m' }, action: { type: 'ban', banDuration: '1h' } };

describe('PolicyBook.applicableAtCheck', () => {
  it('applies a status-matched policy to every request it would match, whatever the status; counting still needs the status', () => {
    const book = new PolicyBook();
    expect(book.apply('failed-logins', record('failed-logins', failedLogins)).kind).toBe('applied');
    for (const status of [undefined, 200, 401, 500]) expect(book.applicableAtCheck(attrs('/login', status)).map((p) => p.id)).toEqual(['failed-logins']);
    expect(book.applicableAtCheck(attrs('/home'))).toEqual([]);
    expect(book.applicable(attrs('/login', 401)).map((p) => p.id)).toEqual(['failed-logins']);
    expect(book.applicable(attrs('/login', 200))).toEqual([]);
    expect(book.applicable(attrs('/login'))).toEqual([]);
  });

  it('keeps a status-matched policy out of its group competition at check time, so the other members still apply', () => {
    const book = new PolicyBook();
    book.apply('failed-logins', record('failed-logins', { ...failedLogins, group: 'login', priority: 10 }));
    book.apply('login-rate', record('login-rate', { key: ['ip'], match: { paths: ['/login'] }, group: 'login', threshold: { count: 100, interval: '1m' }, action: { type: 'throttle' } }));
    // Counting: a 401 counts towards the failures only, any other response towards the rate.
    expect(book.applicable(attrs('/login', 401)).map((p) => p.id)).toEqual(['failed-logins']);
    expect(book.applicable(attrs('/login', 200)).map((p) => p.id)).toEqual(['login-rate']);
    // Checking: both the failures' ban and the rate's throttle are looked up.
    expect(
      book
        .applicableAtCheck(attrs('/login'))
        .map((p) => p.id)
        .sort(),
    ).toEqual(['failed-logins', 'login-rate']);
  });

  it('refuses a record the enforcer could not apply, with the field and the reason', () => {
    const book = new PolicyBook();
    const change = book.apply('by-status', record('by-status', { ...failedLogins, key: ['path', 'status'] }));
    expect(change).toMatchObject({ kind: 'rejected', reason: expect.stringMatching(/^key\[1\]: status cannot be a key of a ban policy: the enforcer checks a request before its response/) });
    expect(book.get('by-status')).toBeUndefined();
  });

  it('agrees with applicablePolicies for every set of policies and request, counting and checking', () => {
    const probe = new PolicyBook();
    probe.apply('probe', record('probe', { key: ['apikey'], threshold: { count: 1, interval: '1m' }, action: { type: 'throttle' } }));
    const k1 = probe.get('probe')!.subjectOf(attrs('/'))!;
    const spec = fc.record({
      group: fc.constantFrom(undefined, 'g1', 'g2'),
      priority: fc.integer({ min: -2, max: 2 }),
      paths: fc.constantFrom(undefined, ['/login'], ['/a/*'], ['/**/x']),
      statuses: fc.constantFrom(undefined, [401], [200, 401]),
      subjects: fc.constantFrom(undefined, [k1]),
    });
    fc.assert(
      fc.property(
        fc.array(spec, { minLength: 1, maxLength: 5 }),
        fc.constantFrom('/login', '/a/b', '/c/x', '/'),
        fc.constantFrom(undefined, 200, 401),
        fc.constantFrom('k1', 'k2'),
        (specs, path, status, apiKey) => {
          const book = new PolicyBook();
          specs.forEach((s, i) => {
            const match = { ...(s.paths ? { paths: s.paths } : {}), ...(s.statuses ? { statuses: s.statuses } : {}), ...(s.subjects ? { subjects: s.subjects } : {}) };
            const definition = {
              key: ['apikey'],
              threshold: { count: 1, interval: '1m' },
              action: { type: 'throttle' },
              priority: s.priority,
              ...(s.group ? { group: s.group } : {}),
              ...(Object.keys(match).length > 0 ? { match } : {}),
            };
            expect(book.apply(`p${i}`, record(`p${i}`, definition)).kind).toBe('applied');
          });
          const request = attrs(path, status, apiKey);
          const ids = (list: readonly { id: string }[]) => list.map((p) => p.id).sort();
          expect(ids(book.applicable(request))).toEqual(ids(applicablePolicies(book.policies, request)));
          expect(ids(book.applicableAtCheck(request))).toEqual(ids(applicablePolicies(book.policies, request, true)));
        },
      ),
      { numRuns: 300 },
    );
  }, 30_000);
});
