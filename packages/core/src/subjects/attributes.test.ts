import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isBanstreamError, type ErrorCode } from '../errors.js';
import { attributesFromEvent, attributesFromRequest, type RequestEventInput } from './attributes.js';
import { normaliseGeo, normaliseHeaders, normaliseHost, normaliseMethod, parseCookies } from './normalise.js';
import { hashApiKey } from './values.js';

function event(overrides: Partial<RequestEventInput> = {}): RequestEventInput {
  return {
    eventId: '01J0000000000000000000000',
    timestamp: 1_700_000_000_000,
    ip: '203.0.113.7',
    country: 'FR',
    region: 'FR-IDF',
    asn: 64500,
    method: 'POST',
    host: 'example.com',
    path: '/login',
    route: '/login',
    status: 401,
    userId: '42',
    apiKeyHash: hashApiKey('secret-key'),
    headers: { 'user-agent': 'curl/8.5' },
    edgeId: 'edge-1',
    latencyMs: 3.5,
    ...overrides,
  };
}

function codeOf(fn: () => unknown): ErrorCode | undefined {
  try {
    fn();
  } catch (err) {
    if (isBanstreamError(err)) return err.code;
    throw err;
  }
  return undefined;
}

describe('attributesFromEvent', () => {
  it('takes the event fields, nulls as undefined', () => {
    const attrs = attributesFromEvent(event({ route: null, userId: null, apiKeyHash: null, country: null, region: null, asn: null }));
    expect(attrs).toMatchObject({
      ip: '203.0.113.7',
      method: 'POST',
      host: 'example.com',
      path: '/login',
      status: 401,
      timestamp: 1_700_000_000_000,
      route: undefined,
      userId: undefined,
      apiKeyHash: undefined,
      country: undefined,
      region: undefined,
      asn: undefined,
      cookies: undefined,
    });
    expect({ ...attrs.headers }).toEqual({ 'user-agent': 'curl/8.5' });
  });

  it('normalises what an edge may have left as is', () => {
    const attrs = attributesFromEvent(
      event({
        ip: '2001:DB8:0:0:1::1',
        method: 'post',
        host: 'Example.COM:443',
        path: '/login?next=/',
        country: 'fr',
        region: 'fr-idf',
        apiKeyHash: hashApiKey('k').toUpperCase(),
        headers: { 'User-Agent': 'x', cookie: 'session=abc' },
        status: 0,
        userId: '',
        route: '',
      }),
    );
    expect(attrs).toMatchObject({
      ip: '2001:db8::1:0:0:1',
      method: 'POST',
      host: 'example.com',
      path: '/login',
      country: 'FR',
      region: 'FR-IDF',
      apiKeyHash: hashApiKey('k'),
      status: undefined,
      userId: undefined,
      route: undefined,
    });
    expect(attrs.headers['user-agent']).toBe('x');
    expect({ ...attrs.cookies }).toEqual({ session: 'abc' });
  });

  it.each<[Partial<RequestEventInput>, ErrorCode, string]>([
    [{ ip: '1.2.3' }, 'SUBJECT_INVALID_IP', 'not an IP address: "1.2.3" (IPv4 needs 4 decimal octets)'],
    [{ ip: '' }, 'SUBJECT_INVALID_IP', 'not an IP address: "" (empty)'],
    [{ apiKeyHash: 'secret-key' }, 'SUBJECT_INVALID_ATTRIBUTE', 'invalid request attribute apiKeyHash: is not a hex SHA-256 (64 hex digits)'],
    [{ status: 42 }, 'SUBJECT_INVALID_ATTRIBUTE', 'invalid request attribute status: 42 is not an HTTP status (100–999, or 0 for none)'],
    [{ asn: -1 }, 'SUBJECT_INVALID_ATTRIBUTE', 'invalid request attribute asn: -1 is not an unsigned 32-bit integer'],
    [{ asn: 2 ** 32 }, 'SUBJECT_INVALID_ATTRIBUTE', 'invalid request attribute asn: 4294967296 is not an unsigned 32-bit integer'],
    [{ timestamp: Number.NaN }, 'SUBJECT_INVALID_ATTRIBUTE', 'invalid request attribute timestamp: NaN is not a time in ms'],
    [{ method: 7 as unknown as string }, 'SUBJECT_INVALID_ATTRIBUTE', 'invalid request attribute method: is not a string'],
    [{ host: null as unknown as string }, 'SUBJECT_INVALID_ATTRIBUTE', 'invalid request attribute host: is not a string'],
    [{ path: undefined as unknown as string }, 'SUBJECT_INVALID_ATTRIBUTE', 'invalid request attribute path: is not a string'],
  ])('refuses an invalid event %j, so it can go to the DLQ with the reason', (overrides, code, message) => {
    expect(codeOf(() => attributesFromEvent(event(overrides)))).toBe(code);
    expect(() => attributesFromEvent(event(overrides))).toThrow(message);
  });
});

describe('attributesFromRequest', () => {
  it('normalises a live request like an edge normalises an event', () => {
    const attrs = attributesFromRequest({
      ip: '::ffff:203.0.113.7',
      method: 'post',
      host: 'Example.com:8080',
      path: '/login?user=alice',
      headers: { 'User-Agent': 'curl/8.5', Cookie: 'session=abc; theme=dark', 'X-Multi': ['a', 'b'], 'X-None': undefined },
      apiKey: 'secret-key',
      userId: '42',
      country: 'fr',
      timestamp: 5,
    });
    expect(attrs).toMatchObject({
      ip: '203.0.113.7',
      method: 'POST',
      host: 'example.com',
      path: '/login',
      userId: '42',
      country: 'FR',
      apiKeyHash: attributesFromEvent(event()).apiKeyHash,
      status: undefined,
      timestamp: 5,
    });
    expect({ ...attrs.headers }).toEqual({ 'user-agent': 'curl/8.5', cookie: 'session=abc; theme=dark', 'x-multi': 'a, b' });
    expect({ ...attrs.cookies }).toEqual({ session: 'abc', theme: 'dark' });
  });

  it("reads the caller's headers only when a header or cookie is first asked for, once", () => {
    let reads = 0;
    const headers = new Proxy({ 'User-Agent': 'curl/8.5', cookie: 'a=1' } as Record<string, string>, {
      ownKeys: (target) => {
        reads++;
        return Reflect.ownKeys(target);
      },
    });
    const attrs = attributesFromRequest({ ip: '192.0.2.1', method: 'GET', host: 'h', path: '/', headers, timestamp: 0 });
    expect(attrs.path).toBe('/');
    expect(reads).toBe(0);
    expect({ ...attrs.cookies }).toEqual({ a: '1' });
    expect(attrs.headers['user-agent']).toBe('curl/8.5');
    expect(attrs.headers).toBe(attrs.headers);
    expect(reads).toBe(1);
  });

  it('treats an empty API key as none, and never keeps the clear key', () => {
    expect(attributesFromRequest({ ip: '192.0.2.1', method: 'GET', host: 'h', path: '/', apiKey: '', timestamp: 0 }).apiKeyHash).toBeUndefined();
    const attrs = attributesFromRequest({ ip: '192.0.2.1', method: 'GET', host: 'h', path: '/', apiKey: 'clear', timestamp: 0 });
    expect(JSON.stringify(attrs)).not.toContain('"clear"');
  });

  it('takes the time apart from the request (the enforcer clock), and refuses a request without one', () => {
    const request = { ip: '192.0.2.1', method: 'GET', host: 'h', path: '/' };
    expect(attributesFromRequest(request, 1_700_000_000_000).timestamp).toBe(1_700_000_000_000);
    expect(attributesFromRequest({ ...request, timestamp: 3 }, 9).timestamp).toBe(9);
    expect(() => attributesFromRequest(request)).toThrow(/invalid request attribute timestamp: undefined is not a time in ms/);
  });

  it('keeps header and cookie maps free of Object.prototype', () => {
    const attrs = attributesFromRequest({ ip: '192.0.2.1', method: 'GET', host: 'h', path: '/', headers: { cookie: 'a=1' }, timestamp: 0 });
    expect(attrs.headers['constructor']).toBeUndefined();
    expect(attrs.cookies?.['toString']).toBeUndefined();
  });
});

describe('normalisers', () => {
  it.each([
    ['Example.COM', 'example.com'],
    ['example.com:8443', 'example.com'],
    ['example.com.', 'example.com'],
    ['example.com.:80.', 'example.com'],
    ['[2001:DB8::1]:443', '[2001:db8::1]'],
    ['[2001:db8::1]', '[2001:db8::1]'],
    ['2001:db8::1', '2001:db8::1'],
    ['example.com:http', 'example.com:http'],
  ])('host %s → %s', (input, expected) => {
    expect(normaliseHost(input)).toBe(expected);
    expect(normaliseHost(expected)).toBe(expected);
  });

  // Text that is mostly already normal, as real requests are, with now and then an
  // upper-case letter, a port, a trailing dot or a non-ASCII letter whose case maps.
  const hostish = fc.stringMatching(/^[a-zA-Z0-9.:\-\[\]_ßİǅ]{0,12}$/);

  it('maps case as toUpperCase and toLowerCase do, also where they skip the copy', () => {
    fc.assert(
      fc.property(hostish, fc.string({ maxLength: 8 }), (text, any) => {
        expect(normaliseMethod(text)).toBe(text.toUpperCase());
        expect(normaliseMethod(any)).toBe(any.toUpperCase());
        expect(normaliseGeo(text)).toBe(text.length === 0 ? undefined : text.toUpperCase());
        expect(Object.keys(normaliseHeaders({ [text]: 'v' }))).toEqual([text.toLowerCase()]);
      }),
      { numRuns: 3_000 },
    );
  });

  it('normalises a host as the lower-casing, port and trailing-dot rules say, also where it skips them', () => {
    // The rules of normaliseHost, written out without its shortcut for a host already normal.
    const stripDots = (h: string) => h.replace(/\.+$/, '');
    const reference = (host: string) => {
      let h = stripDots(host.toLowerCase());
      const colon = h.lastIndexOf(':');
      if (colon >= 0 && /^[0-9]*$/.test(h.slice(colon + 1)) && ((h.startsWith('[') && h[colon - 1] === ']') || h.indexOf(':') === colon)) h = stripDots(h.slice(0, colon));
      return h;
    };
    fc.assert(
      fc.property(hostish, (host) => {
        expect(normaliseHost(host)).toBe(reference(host));
      }),
      { numRuns: 3_000 },
    );
  });

  it('parses cookies: first same-named wins, no name no cookie', () => {
    expect({ ...parseCookies(' a=1;b = 2 ; a=3; =x; flag; c=; d=e=f') }).toEqual({ a: '1', b: '2', c: '', d: 'e=f' });
    expect(parseCookies('')).toBeUndefined();
    expect(parseCookies(undefined)).toBeUndefined();
  });
});
