import { describe, expect, it } from 'vitest';
import { forwardedClient, isTrustedAddress, parseTrustedProxies } from './forwarded.js';

describe('forwardedClient', () => {
  const trusted = parseTrustedProxies('127.0.0.1, 10.0.0.0/8, ::1');

  it('takes the nearest hop that is not a trusted proxy, from the right', () => {
    expect(forwardedClient('127.0.0.1', '198.51.100.7', trusted)).toBe('198.51.100.7');
    expect(forwardedClient('127.0.0.1', '6.6.6.6, 198.51.100.7, 10.1.1.1', trusted)).toBe('198.51.100.7');
    expect(forwardedClient('::1', '10.0.0.2, 10.0.0.3', trusted)).toBe('10.0.0.2');
    expect(forwardedClient('127.0.0.1', undefined, trusted)).toBe('127.0.0.1');
  });

  it('trusts only listed peers, and nothing that is not an address', () => {
    expect(isTrustedAddress('10.9.9.9', trusted)).toBe(true);
    expect(isTrustedAddress('203.0.113.9', trusted)).toBe(false);
    expect(isTrustedAddress('', trusted)).toBe(false);
    expect(isTrustedAddress('127.0.0.1', parseTrustedProxies(''))).toBe(false);
  });
});
