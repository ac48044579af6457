import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '@banstream/core';
import { DEFAULT_HEADER_NAMES } from '../http/original-request.js';
import { askedFromCheck } from './check-request.js';
import type { CheckRequest } from './messages.js';

const names = { ...DEFAULT_HEADER_NAMES, country: 'x-banstream-country' };

function request(http: NonNullable<NonNullable<CheckRequest['attributes']>['request']>['http'], address = '198.51.100.7'): CheckRequest {
  return { attributes: { source: { address: { socket_address: { address, port_value: 51000 } } }, request: { http } } };
}

const GET = { method: 'GET', path: '/api/items?q=1', host: 'shop.example', headers: { 'user-agent': 'curl', 'x-banstream-user': 'alice', 'x-banstream-country': 'AU' } };

/** The error askedFromCheck throws, for its code and message. */
function refusal(message: CheckRequest): { code: string; message: string } {
  try {
    askedFromCheck(message, names);
  } catch (error) {
    if (isBanstreamError(error)) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('not refused');
}

describe('askedFromCheck', () => {
  it('takes the source socket address, method, path, host and headers, and the identity from the configured headers', () => {
    expect(askedFromCheck(request(GET), names)).toEqual({
      ip: '198.51.100.7',
      method: 'GET',
      path: '/api/items?q=1',
      host: 'shop.example',
      headers: GET.headers,
      userId: 'alice',
      country: 'AU',
    });
    expect(askedFromCheck(request(GET, '2001:db8::7'), names).ip).toBe('2001:db8::7');
  });

  it('reads headers sent as a list (encode_raw_headers), raw bytes included, repeated names joined', () => {
    const header_map = {
      headers: [
        { key: 'User-Agent', raw_value: Buffer.from('curl') },
        { key: 'accept', value: 'a' },
        { key: 'accept', value: 'b' },
        { key: 'x-banstream-user', raw_value: Buffer.from('bob') },
      ],
    };
    const asked = askedFromCheck(request({ method: 'GET', path: '/', header_map }), names);
    expect(asked.headers).toEqual({ 'user-agent': 'curl', accept: 'a, b', 'x-banstream-user': 'bob' });
    expect([asked.userId, asked.host]).toEqual(['bob', '']);
    const authority = askedFromCheck(request({ method: 'GET', path: '/', headers: { ':authority': 'shop.example' } }), names);
    expect(authority.host).toBe('shop.example');
  });

  it('refuses what a check cannot go without, naming the field', () => {
    expect(refusal({})).toEqual({ code: 'CHECK_REQUEST_INVALID', message: expect.stringContaining('attributes.request.http is missing') });
    expect(refusal({ attributes: { request: { http: GET } } }).message).toContain('attributes.source.address.socket_address.address is missing');
    expect(refusal({ attributes: { source: { address: { pipe: { path: '/run/envoy.sock' } } }, request: { http: GET } } }).message).toContain('Unix socket');
    expect(refusal(request({ ...GET, method: '' })).message).toContain('attributes.request.http.method is missing');
    expect(refusal(request({ method: 'GET' })).message).toContain('attributes.request.http.path is missing');
  });

  it('refuses an address that is not one, and fields over the bounds of POST /v1/check', () => {
    expect(refusal(request(GET, 'evil.example')).message).toContain('"evil.example" is not an IP address');
    expect(refusal(request(GET, `1.2.3.4${'x'.repeat(500)}`)).message).toContain('(507 characters)');
    expect(refusal(request({ ...GET, method: 'X'.repeat(17) })).message).toContain('method is 17 characters, over 16');
    expect(refusal(request({ ...GET, path: `/${'a'.repeat(8192)}` })).message).toContain('path is 8193 characters, over 8192');
    expect(refusal(request({ ...GET, host: 'h'.repeat(254) })).message).toContain('host is 254 characters, over 253');
  });

  it('refuses a context header that is not a value of its scope, as GET /v1/auth does', () => {
    expect(refusal(request({ ...GET, headers: { 'x-banstream-country': 'AUS' } })).code).toBe('SUBJECT_INVALID_ATTRIBUTE');
  });
});
