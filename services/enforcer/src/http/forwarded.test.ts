import { describe, expect, it } from 'vitest';
import { clientIp, parseTrustedProxies } from './forwarded.js';

describe('clientIp', () => {
  const trusted = parseTrustedProxies('127.0.0.1, 10.0.0.0/8, ::1');

  it('believes X-Forwarded-For only through trusted proxies', () => {
    expect(clientIp('203.0.113.9', '1.2.3.4', trusted)).toBe('203.0.113.9');
    expect(clientIp('127.0.0.1', '198.51.100.7', trusted)).toBe('198.51.100.7');
    expect(clientIp('127.0.0.1', '6.6.6.6, 198.51.100.7, 10.1.1.1', trusted)).toBe('198.51.100.7');
    expect(clientIp('::1', '10.0.0.2, 10.0.0.3', trusted)).toBe('10.0.0.2');
    expect(clientIp('127.0.0.1', undefined, trusted)).toBe('127.0.0.1');
  });
});
