import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '../errors.js';
import { DIMENSION_KINDS, checkDimension, dimensionScope, formatDimension, parseDimension, parseKey, type KeyDimension } from './dimensions.js';

describe('parseDimension', () => {
  it.each<[string, KeyDimension, string]>([
    ['ip', { kind: 'ip' }, 'ip'],
    ['prefix', { kind: 'prefix', v4: 24, v6: 64 }, 'cidr'],
    ['prefix/20', { kind: 'prefix', v4: 20, v6: 64 }, 'cidr'],
    ['prefix/20,48', { kind: 'prefix', v4: 20, v6: 48 }, 'cidr'],
    ['prefix/0,128', { kind: 'prefix', v4: 0, v6: 128 }, 'cidr'],
    ['user', { kind: 'user' }, 'user'],
    ['apikey', { kind: 'apikey' }, 'apikey'],
    ['header:user-agent', { kind: 'header', name: 'user-agent' }, 'header.user-agent'],
    ['header:X-Forwarded-Host', { kind: 'header', name: 'x-forwarded-host' }, 'header.x-forwarded-host'],
    ['cookie:session', { kind: 'cookie', name: 'session' }, 'cookie.session'],
    ['cookie:SID', { kind: 'cookie', name: 'SID' }, 'cookie.SID'],
    ['method', { kind: 'method' }, 'method'],
    ['status_class', { kind: 'status_class' }, 'status_class'],
    ['asn', { kind: 'asn' }, 'asn'],
  ])('%s', (text, dimension, scope) => {
    expect(parseDimension(text)).toEqual(dimension);
    expect(dimensionScope(parseDimension(text))).toBe(scope);
  });

  it('parses every plain kind, and formats each dimension back', () => {
    for (const kind of DIMENSION_KINDS) {
      const text = kind === 'header' || kind === 'cookie' ? `${kind}:x-a` : kind;
      expect(formatDimension(parseDimension(text))).toBe(text);
    }
    expect(formatDimension({ kind: 'prefix', v4: 20 })).toBe('prefix/20');
    expect(formatDimension({ kind: 'prefix', v6: 48 })).toBe('prefix/24,48');
    expect(formatDimension({ kind: 'header', name: 'User-Agent' })).toBe('header:user-agent');
  });

  it.each([
    ['', 'empty'],
    ['IP', 'expected one of ip, prefix[/<v4 bits>[,<v6 bits>]], user, apikey, header:<name>, cookie:<name>, method, host, path, route, status, status_class, country, region, asn'],
    ['cidr', 'expected one of'],
    ['header', 'expected header:<name>'],
    ['header:', 'header needs a name'],
    ['cookie:a|b', 'cookie name may only hold letters, digits'],
    ['header:a%20b', 'header name may only hold letters, digits'],
    ['header:a b', 'header name may only hold letters, digits'],
    [`header:${'a'.repeat(65)}`, 'header name longer than 64'],
    ['header:Cookie', 'header cookie cannot be a key: use cookie:<name> to key on one cookie'],
    ['header:authorization', 'header authorization cannot be a key: credentials never leave the edge'],
    ['user:42', 'only header:<name> and cookie:<name> take a name'],
    ['prefix/', 'prefix bits must be decimal numbers, not ""'],
    ['prefix/33', 'IPv4 prefix bits are 0 to 32, not 33'],
    ['prefix/24,129', 'IPv6 prefix bits are 0 to 128, not 129'],
    ['prefix/024', 'prefix bits must be decimal numbers, not "024"'],
    ['prefix/24,48,1', 'expected prefix/<IPv4 bits> or prefix/<IPv4 bits>,<IPv6 bits>'],
    ['prefix/,48', 'prefix bits must be decimal numbers, not ""'],
  ])('refuses %j: %s', (text, reason) => {
    const err = (() => {
      try {
        parseDimension(text);
      } catch (e) {
        return e;
      }
    })();
    expect(isBanstreamError(err, 'SUBJECT_INVALID_DIMENSION')).toBe(true);
    expect((err as Error).message).toContain(`not a key dimension: ${JSON.stringify(text)} (${reason}`);
  });

  it('checks dimensions that come as objects (JSON), not only as text', () => {
    expect(checkDimension({ kind: 'prefix' })).toEqual({ kind: 'prefix', v4: 24, v6: 64 });
    expect(() => checkDimension({ kind: 'nope' } as unknown as KeyDimension)).toThrow('unknown kind');
    expect(() => checkDimension({ kind: 'prefix', v4: 1.5 })).toThrow('IPv4 prefix bits are 0 to 32, not 1.5');
    expect(() => checkDimension({ kind: 'header' } as unknown as KeyDimension)).toThrow('header needs a name');
    expect(() => checkDimension({ kind: 'header', name: 'constructor' })).not.toThrow();
  });
});

describe('parseKey', () => {
  it('sorts into the canonical order, whatever the policy order', () => {
    const a = parseKey(['path', 'header:b', 'user', 'header:a', 'ip']);
    const b = parseKey(['ip', 'header:a', 'user', 'path', 'header:b']);
    expect(a).toEqual(b);
    expect(a.map(formatDimension)).toEqual(['ip', 'user', 'header:a', 'header:b', 'path']);
  });

  it('accepts objects and text together', () => {
    expect(parseKey([{ kind: 'user' }, 'ip'])).toEqual([{ kind: 'ip' }, { kind: 'user' }]);
  });

  it('refuses an empty key and two dimensions with one scope', () => {
    expect(() => parseKey([])).toThrow('a key needs at least one dimension');
    expect(() => parseKey(['ip', 'ip'])).toThrow('ip and ip both give scope ip');
    expect(() => parseKey(['prefix/20', 'prefix'])).toThrow('prefix/20 and prefix both give scope cidr');
    expect(() => parseKey(['header:A', 'header:a'])).toThrow('both give scope header.a');
    expect(parseKey(['cookie:A', 'cookie:a'])).toHaveLength(2); // cookie names are case-sensitive
  });
});
