import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attributesFromEvent, attributesFromRequest, type RequestEventInput, type RequestInput } from './attributes.js';
import { formatIp } from './ip.js';
import { normaliseHeaders } from './normalise.js';
import { compileKey, keyParts, subjectFor } from './subject.js';
import { formatSubject, parseSubject, subjectScope } from './subject-text.js';
import { hashApiKey, hashValue, isHashedValue } from './values.js';

const request: RequestInput = {
  ip: '203.0.113.7',
  method: 'POST',
  host: 'example.com',
  path: '/login',
  route: '/users/:id',
  status: 401,
  headers: { 'user-agent': 'curl/8.5', cookie: 'session=abc123' },
  apiKey: 'secret-key',
  userId: '42',
  country: 'FR',
  region: 'FR-IDF',
  asn: 64500,
  timestamp: 0,
};
const attrs = attributesFromRequest(request);
const keyHash = hashApiKey('secret-key');

/** The event an edge publishes for a request: key hashed, headers normalised, no cookie header. */
function edgeEvent(r: RequestInput): RequestEventInput {
  const { cookie: _cookie, ...headers } = normaliseHeaders(r.headers);
  return {
    eventId: 'e',
    timestamp: r.timestamp,
    ip: r.ip,
    country: r.country ?? null,
    region: r.region ?? null,
    asn: r.asn ?? null,
    method: r.method,
    host: r.host,
    path: r.path,
    route: r.route ?? null,
    status: r.status ?? 0,
    userId: r.userId ?? null,
    apiKeyHash: r.apiKey ? hashApiKey(r.apiKey) : null,
    headers,
    edgeId: 'edge',
    latencyMs: null,
  };
}

describe('subjectFor: one dimension', () => {
  it.each([
    ['ip', 'ip:203.0.113.7'],
    ['prefix', 'cidr:203.0.113.0/24'],
    ['prefix/20', 'cidr:203.0.112.0/20'],
    ['user', 'user:42'],
    ['apikey', `apikey:${keyHash.slice(0, 32)}`],
    ['header:user-agent', 'header.user-agent:curl/8.5'],
    ['header:User-Agent', 'header.user-agent:curl/8.5'],
    ['cookie:session', `cookie.session:${hashValue('abc123')}`],
    ['method', 'method:POST'],
    ['host', 'host:example.com'],
    ['path', 'path:/login'],
    ['route', 'route:/users/:id'],
    ['status', 'status:401'],
    ['status_class', 'status_class:4xx'],
    ['country', 'country:FR'],
    ['region', 'region:FR-IDF'],
    ['asn', 'asn:64500'],
  ])('%s → %s', (dimension, subject) => {
    expect(subjectFor([dimension], attrs)).toBe(subject);
    const parts = keyParts([dimension])!;
    expect(parts.scope + parts.valueOf(attrs)!).toBe(subject);
  });

  it('keyParts: none for a composite key; no value where the subject has none', () => {
    expect(keyParts(['ip', 'user'])).toBeUndefined();
    const anonymous = attributesFromRequest({ ...request, userId: undefined });
    expect(subjectFor(['user'], anonymous)).toBeUndefined();
    expect(keyParts(['user'])!.valueOf(anonymous)).toBeUndefined();
  });

  it('IPv6 prefixes: /64 by default, per-family bits otherwise', () => {
    const v6 = attributesFromRequest({ ...request, ip: '2001:db8:1:2:3:4:5:6' });
    expect(subjectFor(['ip'], v6)).toBe('ip:2001:db8:1:2:3:4:5:6');
    expect(subjectFor(['prefix'], v6)).toBe('cidr:2001:db8:1:2::/64');
    expect(subjectFor(['prefix/24,48'], v6)).toBe('cidr:2001:db8:1::/48');
    expect(subjectFor(['prefix/24,57'], v6)).toBe('cidr:2001:db8:1::/57');
    expect(subjectFor([{ kind: 'prefix', v6: 0 }], v6)).toBe('cidr:::/0');
    expect(subjectFor(['prefix/24,128'], v6)).toBe('cidr:2001:db8:1:2:3:4:5:6/128');
    expect(subjectFor(['ip'], attributesFromRequest({ ...request, ip: '::ffff:c000:0201' }))).toBe('ip:192.0.2.1');
  });

  it('status_class for each class; no status, no subject', () => {
    for (const [status, cls] of [
      [100, '1xx'],
      [204, '2xx'],
      [302, '3xx'],
      [429, '4xx'],
      [503, '5xx'],
    ] as const) {
      expect(subjectFor(['status_class'], attributesFromRequest({ ...request, status }))).toBe(`status_class:${cls}`);
    }
    expect(subjectFor(['status_class'], attributesFromRequest({ ...request, status: undefined }))).toBeUndefined();
    expect(subjectFor(['status'], attributesFromEvent({ ...edgeEvent(request), status: 0 }))).toBeUndefined();
  });

  it('a missing or empty value gives no subject: the policy does not count the request', () => {
    const anonymous = attributesFromRequest({ ...request, userId: undefined, apiKey: undefined, headers: { 'user-agent': '' }, route: null, country: '' });
    for (const dimension of ['user', 'apikey', 'header:user-agent', 'header:x-missing', 'cookie:session', 'route', 'country', 'region']) {
      if (dimension !== 'region') expect(subjectFor([dimension], anonymous)).toBeUndefined();
    }
    expect(subjectFor(['ip', 'user'], anonymous)).toBeUndefined();
    expect(subjectFor(['header:constructor'], anonymous)).toBeUndefined();
  });

  it('hashes oversized values: deterministic and bounded', () => {
    const ua = 'Mozilla/5.0 '.repeat(1000);
    const subject = subjectFor(['header:user-agent'], attributesFromRequest({ ...request, headers: { 'user-agent': ua } }))!;
    expect(subject).toBe(`header.user-agent:${hashValue(ua)}`);
    expect(subject).toHaveLength('header.user-agent:'.length + 24);
    expect(subjectFor(['header:user-agent'], attributesFromEvent({ ...edgeEvent(request), headers: { 'user-agent': ua } }))).toBe(subject);
  });
});

describe('subjectFor: composites', () => {
  it('joins parts in the canonical order, whatever the policy order', () => {
    expect(subjectFor(['path', 'ip'], attrs)).toBe('ip:203.0.113.7|path:/login');
    expect(subjectFor(['user', 'ip'], attrs)).toBe(subjectFor(['ip', 'user'], attrs));
    expect(subjectFor(['country', 'status_class', 'apikey', 'prefix'], attrs)).toBe(`cidr:203.0.113.0/24|apikey:${keyHash.slice(0, 32)}|status_class:4xx|country:FR`);
  });

  it('a | in a value cannot pass for a second part', () => {
    const forged = attributesFromRequest({ ...request, headers: { 'x-tenant': 'a|path:/login' } });
    const honest = attributesFromRequest({ ...request, headers: { 'x-tenant': 'a' } });
    const forgedSubject = subjectFor(['header:x-tenant'], forged)!;
    expect(forgedSubject).toBe('header.x-tenant:a%7Cpath:/login');
    expect(forgedSubject).not.toBe(subjectFor(['header:x-tenant', 'path'], honest));
    expect(parseSubject(forgedSubject)).toEqual([{ scope: 'header.x-tenant', value: 'a|path:/login', hashed: false }]);
  });

  it('the API key subject from a clear key equals the one from apiKeyHash', () => {
    const fromEnforcer = subjectFor(['apikey'], attributesFromRequest({ ...request, apiKey: 'k-123' }));
    const fromAggregator = subjectFor(['apikey'], attributesFromEvent({ ...edgeEvent(request), apiKeyHash: hashApiKey('k-123') }));
    expect(fromEnforcer).toBe(fromAggregator);
    expect(fromEnforcer).toBe(`apikey:${hashApiKey('k-123').slice(0, 32)}`);
  });

  it('compileKey refuses a bad key once, at policy load', () => {
    expect(() => compileKey([])).toThrow('a key needs at least one dimension');
    expect(() => compileKey(['ip', 'nope'])).toThrow('not a key dimension: "nope"');
  });
});

const text = fc.string({ unit: fc.oneof(fc.constantFrom('|', '%', ':', 'h', '\n', 'é', '€'), fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 1 })), maxLength: 150 });
const ipText = fc.oneof(fc.uint8Array({ minLength: 4, maxLength: 4 }), fc.uint8Array({ minLength: 16, maxLength: 16 })).map(formatIp);
const requestArb: fc.Arbitrary<RequestInput> = fc.record({
  ip: ipText,
  method: fc.constantFrom('GET', 'post', 'Put', 'X|Y'),
  host: fc.oneof(fc.domain(), text),
  path: text,
  route: fc.option(text, { nil: undefined }),
  status: fc.option(fc.integer({ min: 100, max: 599 }), { nil: undefined }),
  headers: fc.dictionary(fc.constantFrom('user-agent', 'X-Tenant', 'accept'), text),
  apiKey: fc.option(text, { nil: undefined }),
  userId: fc.option(text, { nil: undefined }),
  country: fc.option(fc.constantFrom('FR', 'de', ''), { nil: undefined }),
  region: fc.option(text, { nil: undefined }),
  asn: fc.option(fc.integer({ min: 0, max: 2 ** 32 - 1 }), { nil: undefined }),
  timestamp: fc.nat(),
});
const dims = ['ip', 'prefix', 'prefix/20,48', 'user', 'apikey', 'header:user-agent', 'header:x-tenant', 'method', 'host', 'path', 'route', 'status', 'status_class', 'country', 'region', 'asn'];
const keyArb = fc.uniqueArray(fc.constantFrom(...dims.filter((d) => d !== 'prefix/20,48')), { minLength: 1, maxLength: 5 });

describe('subjects: properties', () => {
  it('the enforcer (request) and the aggregator (event) derive the same subject for every key', () => {
    fc.assert(
      fc.property(requestArb, keyArb, (r, key) => {
        expect(subjectFor(key, attributesFromRequest(r))).toBe(subjectFor(key, attributesFromEvent(edgeEvent(r))));
      }),
      { numRuns: 1000 },
    );
  });

  it('the order of dimensions in a key does not matter', () => {
    fc.assert(
      fc.property(
        requestArb,
        keyArb.chain((k) => fc.tuple(fc.constant(k), fc.shuffledSubarray(k, { minLength: k.length }))),
        (r, [key, shuffled]) => {
          const a = attributesFromRequest(r);
          expect(compileKey(shuffled)(a)).toBe(compileKey(key)(a));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('parseSubject → formatSubject is the identity on every subject produced, and parts match scopes', () => {
    fc.assert(
      fc.property(requestArb, keyArb, (r, key) => {
        const subject = subjectFor(key, attributesFromRequest(r));
        if (subject === undefined) return;
        const parts = parseSubject(subject);
        expect(formatSubject(parts)).toBe(subject);
        expect(parts.map((p) => p.scope).join('|')).toBe(subjectScope(subject));
        expect(parts).toHaveLength(key.length);
        for (const part of parts) if (part.hashed) expect(isHashedValue(part.value)).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});
