import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatSubject, parseSubject, PolicyBook, type SubjectPart } from '@banstream/core';
import { CONTEXT_SCOPES, scopesIn, scopesOfPolicy, scopesOfSubject } from './context-scopes.js';
import type { PolicyRecord } from '@banstream/schemas';

/** Text that tries to look like a scope inside a value: separators, colons, escapes, scope names. */
const hostileText = fc.oneof(fc.string({ minLength: 1, maxLength: 12 }), fc.constantFrom('country:AU', 'x|route:/a', 'asn:1', '%7C', 'region:FR-IDF|', ':', '|', '/users/:id'));
const part: fc.Arbitrary<SubjectPart> = fc.oneof(
  fc.tuple(fc.nat(255), fc.nat(255)).map(([a, b]) => ({ scope: 'ip', value: `192.0.${a}.${b}`, hashed: false })),
  fc.constant({ scope: 'cidr', value: '10.0.0.0/8', hashed: false }),
  fc.constant({ scope: 'apikey', value: '0123456789abcdef0123456789abcdef', hashed: false }),
  fc.constantFrom('user', 'path', 'route', 'host', 'header.x-geo', 'method').chain((scope) => hostileText.map((value) => ({ scope, value, hashed: false }))),
  fc.constantFrom('AU', 'fr', 'NZ').map((value) => ({ scope: 'country', value, hashed: false })),
  fc.constantFrom('FR-IDF', 'us-ca').map((value) => ({ scope: 'region', value, hashed: false })),
  fc.constantFrom('0', '13335', '4294967295').map((value) => ({ scope: 'asn', value, hashed: false })),
  fc.constantFrom('401', '503').map((value) => ({ scope: 'status', value, hashed: false })),
);

describe('scopesOfSubject', () => {
  it('finds exactly the context scopes parseSubject reads in any subject formatSubject writes, whatever the values hold', () => {
    fc.assert(
      fc.property(fc.uniqueArray(part, { minLength: 1, maxLength: 4, selector: (p) => p.scope }), (parts) => {
        let subject: string;
        try {
          subject = formatSubject(parts);
        } catch {
          return; // a value the format refuses (empty after normalising): no such subject exists
        }
        const read = new Set(parseSubject(subject).map((p) => p.scope));
        expect(scopesIn(scopesOfSubject(subject))).toEqual(CONTEXT_SCOPES.filter((s) => read.has(s)));
      }),
      { numRuns: 3000 },
    );
  });

  it('reads any text in one pass without throwing, and finds no scope in a bare scope name', () => {
    fc.assert(fc.property(fc.string({ maxLength: 200 }), (text) => void scopesOfSubject(text)));
    expect(scopesOfSubject('country:')).toBe(0);
    expect(scopesOfSubject('x'.repeat(100_000))).toBe(0);
    expect(scopesIn(scopesOfSubject('ip:192.0.2.1|route:/login|asn:7'))).toEqual(['asn', 'route']);
  });
});

describe('scopesOfPolicy', () => {
  const book = new PolicyBook();
  const policy = (id: string, spec: Record<string, unknown>) => {
    const record: PolicyRecord = { id, version: 1, description: '', owner: 't', mode: 'enforce', enabled: true, definition: JSON.stringify(spec), updatedBy: 't', updatedAt: 0 };
    expect(book.apply(id, record).kind).toBe('applied');
    return book.get(id)!;
  };
  const base = { threshold: { count: 5, interval: '1m' }, action: { type: 'ban', banDuration: '1h' } };

  it('needs the context scopes of its key and of match.countries and regions, and none otherwise', () => {
    expect(scopesIn(scopesOfPolicy(policy('by-country', { ...base, key: ['country'] })))).toEqual(['country']);
    expect(scopesIn(scopesOfPolicy(policy('per-asn-route', { ...base, key: ['ip', 'asn', 'route'] })))).toEqual(['asn', 'route']);
    expect(scopesIn(scopesOfPolicy(policy('fr-only', { ...base, key: ['ip'], match: { countries: ['FR'], regions: ['FR-IDF'] } })))).toEqual(['country', 'region']);
    expect(scopesOfPolicy(policy('plain', { ...base, key: ['ip', 'header:x-route'], match: { paths: ['/login'] } }))).toBe(0);
  });
});
