import { describe, expect, it } from 'vitest';
import { isBanstreamError } from '../errors.js';
import { attributesFromRequest, hashApiKey } from '../subjects/index.js';
import { Allowlist, canonicalAllowEntry } from './allowlist.js';

const req = (ip: string, extra: { userId?: string; apiKey?: string } = {}) => attributesFromRequest({ ip, method: 'GET', host: 'example.com', path: '/', headers: {}, timestamp: 0, ...extra });

describe('canonicalAllowEntry', () => {
  it('accepts IPs, CIDRs, users and API keys in their usual spellings', () => {
    expect(canonicalAllowEntry('203.0.113.7')).toBe('ip:203.0.113.7');
    expect(canonicalAllowEntry('::ffff:203.0.113.7')).toBe('ip:203.0.113.7');
    expect(canonicalAllowEntry('10.1.2.3/8')).toBe('cidr:10.0.0.0/8');
    expect(canonicalAllowEntry('cidr:2001:db8::/32')).toBe('cidr:2001:db8::/32');
    expect(canonicalAllowEntry('198.51.100.1/32')).toBe('ip:198.51.100.1');
    expect(canonicalAllowEntry('user:42')).toBe('user:42');
  });

  it('rejects other subjects with a clear message', () => {
    let error: unknown;
    try {
      canonicalAllowEntry('country:FR');
    } catch (e) {
      error = e;
    }
    expect(isBanstreamError(error, 'SUBJECT_INVALID')).toBe(true);
    expect((error as Error).message).toBe('allowlist entries are an IP, a CIDR, user:<id> or apikey:<hash>; got "country:FR"');
  });
});

describe('Allowlist', () => {
  it('matches an exact IP, a user, an API key, and every address inside a CIDR', () => {
    const list = new Allowlist();
    list.add({ entry: '198.51.100.9', reason: 'office' });
    list.add({ entry: '10.0.0.0/8' });
    list.add({ entry: '2001:db8:aa::/48' });
    list.add({ entry: 'user:ops' });
    list.add({ entry: `apikey:${hashApiKey('monitoring-key').slice(0, 32)}` });
    expect(list.find(req('198.51.100.9'), 0)?.reason).toBe('office');
    expect(list.find(req('10.255.3.4'), 0)?.entry).toBe('cidr:10.0.0.0/8');
    expect(list.find(req('2001:db8:aa:ffff::1'), 0)?.entry).toBe('cidr:2001:db8:aa::/48');
    expect(list.find(req('2001:db8:ab::1'), 0)).toBeUndefined();
    expect(list.find(req('11.0.0.1'), 0)).toBeUndefined();
    expect(list.find(req('11.0.0.1', { userId: 'ops' }), 0)?.entry).toBe('user:ops');
    expect(list.find(req('11.0.0.1', { apiKey: 'monitoring-key' }), 0)?.entry).toMatch(/^apikey:/);
    expect(list.size).toBe(5);
  });

  it('ignores and purges expired entries', () => {
    const list = new Allowlist();
    list.add({ entry: '10.0.0.0/8', expiresAt: 1_000 });
    list.add({ entry: '192.0.2.1' });
    expect(list.find(req('10.1.1.1'), 999)).toBeDefined();
    expect(list.find(req('10.1.1.1'), 1_000)).toBeUndefined();
    expect(list.purgeExpired(1_000)).toBe(1);
    expect(list.size).toBe(1);
  });

  it('removes entries by any spelling', () => {
    const list = new Allowlist();
    list.add({ entry: '10.0.0.0/8' });
    expect(list.remove('cidr:10.9.9.9/8')).toBe(true);
    expect(list.find(req('10.1.1.1'), 0)).toBeUndefined();
    expect(list.size).toBe(0);
  });
});
