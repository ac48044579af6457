import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '../errors.js';
import { formatSubject, normaliseSubject, parseSubject, subjectScope } from './subject-text.js';
import { hashApiKey, hashValue } from './values.js';

const key = hashApiKey('k');

describe('parseSubject', () => {
  it('reads the parts back, values unescaped', () => {
    expect(parseSubject('ip:203.0.113.7|path:/a%7Cb')).toEqual([
      { scope: 'ip', value: '203.0.113.7', hashed: false },
      { scope: 'path', value: '/a|b', hashed: false },
    ]);
    expect(parseSubject(`header.user-agent:${hashValue('x'.repeat(500))}`)).toEqual([{ scope: 'header.user-agent', value: hashValue('x'.repeat(500)), hashed: true }]);
    expect(parseSubject('user:h%3Aabc')).toEqual([{ scope: 'user', value: 'h:abc', hashed: false }]);
    expect(parseSubject('route:/users/:id')).toEqual([{ scope: 'route', value: '/users/:id', hashed: false }]);
  });

  it.each([
    ['', 'empty'],
    ['ip', '"ip" is not scope:value'],
    [':x', '":x" is not scope:value'],
    ['ip:1.2.3', 'not an IP address: "1.2.3" (IPv4 needs 4 decimal octets)'],
    ['cidr:10.0.0.0/33', 'an IPv4 prefix length is an integer from 0 to 32, not 33'],
    ['prefix:10.0.0.0/8', 'the scope of a network is cidr, not prefix'],
    ['nope:1', 'unknown scope "nope"'],
    ['header.User-Agent:x', 'header scopes are lower case: header.user-agent'],
    ['header.cookie:x', 'unknown scope "header.cookie"'],
    ['user:', 'empty value for user'],
    ['user:a%zz', 'bad %-escape in "a%zz"'],
    ['ip:192.0.2.1|ip:192.0.2.2', 'scope ip appears twice'],
    ['apikey:xyz', 'apikey values are 32 or 64 hex digits'],
    [`ip:${hashValue('x')}`, 'ip values are never hashed'],
    ['status:42', 'status values are 100 to 999'],
    ['status_class:4x', 'status_class values look like 4xx'],
    ['asn:-1', 'asn values are 0 to 4294967295'],
    ['asn:4294967296', 'asn values are 0 to 4294967295'],
    [`user:${'x'.repeat(5000)}`, 'longer than 4096 characters'],
  ])('refuses %j: %s', (text, reason) => {
    const err = (() => {
      try {
        parseSubject(text);
      } catch (e) {
        return e;
      }
    })();
    expect(isBanstreamError(err, 'SUBJECT_INVALID')).toBe(true);
    expect((err as Error).message).toContain(reason);
  });
});

describe('normaliseSubject: what an operator types becomes what compileKey produces', () => {
  it.each([
    ['ip:2001:DB8:0:0:1::1', 'ip:2001:db8::1:0:0:1'],
    ['ip:::ffff:192.0.2.1', 'ip:192.0.2.1'],
    ['cidr:10.1.2.3/8', 'cidr:10.0.0.0/8'],
    ['user:42|ip:192.0.2.1', 'ip:192.0.2.1|user:42'],
    ['path:/login|header.x-tenant:a', 'header.x-tenant:a|path:/login'],
    // A path as the requests that reach it are matched (normalisePath); its own % written %25.
    ['path:/%2561dmin', 'path:/admin'],
    ['path:/shop/../admin/./?next=1', 'path:/admin/'],
    ['path://admin', 'path:/admin'],
    ['path:/a%252fb', 'path:/a%252Fb'],
    [`apikey:${key}`, `apikey:${key.slice(0, 32)}`],
    [`apikey:${key.slice(0, 32).toUpperCase()}`, `apikey:${key.slice(0, 32)}`],
    ['method:post', 'method:POST'],
    ['host:Example.com:443', 'host:example.com'],
    ['country:fr', 'country:FR'],
    ['status_class:4XX', 'status_class:4xx'],
    ['cookie.session:abc123', `cookie.session:${hashValue('abc123')}`],
    [`user:${'é'.repeat(100)}`, `user:${hashValue('é'.repeat(100))}`],
    ['user:a\nb', 'user:a%0Ab'],
  ])('%s → %s', (typed, canonical) => {
    expect(normaliseSubject(typed)).toBe(canonical);
    expect(normaliseSubject(canonical)).toBe(canonical);
  });

  // Kafka stores U+FFFD for a lone surrogate: the subject held would not be the one answered.
  it.each(['user:\ud800', 'user:a\udc00b', 'ip:192.0.2.1|user:\ud83d', 'header.x-a:\ude00\ud83d'])('refuses %j, not Unicode text (SUBJECT_INVALID)', (typed) => {
    let error: unknown;
    try {
      normaliseSubject(typed);
    } catch (e) {
      error = e;
    }
    expect(isBanstreamError(error) && error.code).toBe('SUBJECT_INVALID');
    expect((error as Error).message).toMatch(/lone surrogate/);
  });

  it('takes a paired surrogate (an emoji) as it is', () => {
    expect(normaliseSubject('user:\ud83d\ude00')).toBe('user:\ud83d\ude00');
  });
});

describe('formatSubject', () => {
  it('escapes and bounds plain values, keeps hashed ones', () => {
    expect(
      formatSubject([
        { scope: 'path', value: '/a|b', hashed: false },
        { scope: 'ip', value: '192.0.2.1', hashed: false },
      ]),
    ).toBe('ip:192.0.2.1|path:/a%7Cb');
    expect(formatSubject([{ scope: 'user', value: hashValue('x'), hashed: true }])).toBe(`user:${hashValue('x')}`);
  });

  it('refuses no parts, a fake digest and an empty value', () => {
    expect(() => formatSubject([])).toThrow('no parts');
    expect(() => formatSubject([{ scope: 'user', value: 'h:short', hashed: true }])).toThrow('is not a hashed value');
    expect(() => formatSubject([{ scope: 'user', value: '', hashed: false }])).toThrow('empty value for user');
  });
});

describe('subjectScope', () => {
  it.each([
    ['ip:203.0.113.7', 'ip'],
    ['ip:2001:db8::1', 'ip'],
    ['cidr:203.0.113.0/24|user:42', 'cidr|user'],
    ['header.user-agent:a%7Cb|path:/x', 'header.user-agent|path'],
  ])('%s → %s', (subject, scope) => {
    expect(subjectScope(subject)).toBe(scope);
  });

  it('refuses text without a scope', () => {
    expect(() => subjectScope('nothing')).toThrow('a part is not scope:value');
    expect(() => subjectScope('ip:1|x')).toThrow('a part is not scope:value');
  });
});
