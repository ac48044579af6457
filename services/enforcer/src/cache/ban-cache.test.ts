import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cidrContains, networkOf, parseIp } from '@banstream/core';
import type { Ban } from '@banstream/schemas';
import { BanCache } from './ban-cache.js';

const ban = (subject: string, expiresAt = 10_000): Ban => ({
  banId: subject,
  subject,
  policyId: 'p',
  reason: 'r',
  evidenceCount: 1,
  windowSeconds: 60,
  startedAt: 0,
  expiresAt,
  preview: false,
  escalationLevel: 0,
  origin: 'aggregator',
  httpStatus: 403,
  createdBy: null,
});

describe('BanCache', () => {
  it('finds exactly the IPv4 networks containing an address, as cidrContains says, over every prefix length, through lifts', () => {
    const octet = fc.integer({ min: 0, max: 255 });
    const address = fc.tuple(octet, octet, octet, octet).map((b) => b.join('.'));
    fc.assert(
      fc.property(fc.array(fc.tuple(address, fc.integer({ min: 0, max: 32 }), fc.boolean()), { maxLength: 40 }), fc.array(address, { minLength: 1, maxLength: 20 }), (networks, probes) => {
        const cache = new BanCache();
        const held = new Map<string, boolean>();
        for (const [ip, bits, lift] of networks) {
          const text = `cidr:${networkOf(ip, bits).text}`;
          cache.observe(text, lift ? null : ban(text));
          held.set(text, !lift);
        }
        // Probes near the networks too, so that most lengths have a hit.
        for (const probe of [...probes, ...networks.map(([ip]) => ip)]) {
          const expected = [...held].filter(([text, live]) => live && cidrContains(text.slice(5), probe)).map(([text]) => text);
          const found = (cache.networksOf(parseIp(probe), 0) ?? []).map((b) => b.subject);
          expect(found.sort()).toEqual(expected.sort());
        }
      }),
      { numRuns: 300 },
    );
  });

  it('matches exact subjects and every banned network containing an address, until expiry', () => {
    const cache = new BanCache();
    cache.observe('ip:192.0.2.1', ban('ip:192.0.2.1'));
    cache.observe('cidr:198.51.100.0/24', ban('cidr:198.51.100.0/24'));
    cache.observe('cidr:198.51.0.0/16', ban('cidr:198.51.0.0/16', 500));
    cache.observe('cidr:2001:db8::/48', ban('cidr:2001:db8::/48'));
    expect(cache.subject('ip:192.0.2.1', 0)?.banId).toBe('ip:192.0.2.1');
    const found: Ban[] = [];
    cache.networksOf(parseIp('198.51.100.77'), 0, found);
    expect(found.map((b) => b.subject).sort()).toEqual(['cidr:198.51.0.0/16', 'cidr:198.51.100.0/24']);
    const later: Ban[] = [];
    cache.networksOf(parseIp('198.51.100.77'), 600, later);
    expect(later.map((b) => b.subject)).toEqual(['cidr:198.51.100.0/24']);
    const v6: Ban[] = [];
    cache.networksOf(parseIp('2001:db8:0:1::5'), 0, v6);
    expect(v6).toHaveLength(1);
    expect(cache.subject('ip:192.0.2.1', 10_000)).toBeUndefined();
  });

  it('finds an address ban whose key spells the address another way (upper case, IPv4-mapped), and lifts it by that key', () => {
    const cache = new BanCache();
    cache.observe('ip:2001:DB8::0:1', ban('ip:2001:DB8::0:1'));
    cache.observe('ip:::ffff:192.0.2.9', ban('ip:::ffff:192.0.2.9'));
    expect(cache.address(parseIp('2001:db8::1'), 0)?.banId).toBe('ip:2001:DB8::0:1');
    expect(cache.address(parseIp('192.0.2.9'), 0)?.banId).toBe('ip:::ffff:192.0.2.9');
    cache.observe('ip:2001:DB8::0:1', null);
    cache.observe('ip:::ffff:192.0.2.9', null);
    expect(cache.size).toBe(0);
  });

  it('keeps one subject function per shape of manual ban on other subjects, until its last ban goes', () => {
    const cache = new BanCache();
    const manual = (subject: string, expiresAt = 10_000): Ban => ({ ...ban(subject, expiresAt), origin: 'manual' });
    cache.observe('user:7', manual('user:7')); // looked up anyway: no shape
    cache.observe('path:/a', ban('path:/a')); // a policy's: looked up through its policy
    expect(cache.manualSubjectFns).toHaveLength(0);
    cache.observe('path:/a', manual('path:/a'));
    cache.observe('path:/b', manual('path:/b', 100));
    cache.observe('cidr:10.0.0.0/8|path:/x', manual('cidr:10.0.0.0/8|path:/x'));
    expect(cache.manualSubjectFns).toHaveLength(2);
    expect(cache.subject('cidr:10.0.0.0/8|path:/x', 0)?.subject).toBe('cidr:10.0.0.0/8|path:/x');
    cache.observe('path:/a', null);
    expect(cache.manualSubjectFns).toHaveLength(2);
    cache.purgeExpired(200);
    cache.observe('cidr:10.0.0.0/8|path:/x', ban('cidr:10.0.0.0/8|path:/x')); // replaced by a policy's ban
    expect(cache.manualSubjectFns).toHaveLength(0);
  });

  it('lifts bans on tombstones and purges expired ones, keeping memory to live bans', () => {
    const cache = new BanCache();
    cache.observe('cidr:198.51.100.0/24', ban('cidr:198.51.100.0/24'));
    cache.observe('user:7', ban('user:7', 100));
    cache.observe('cidr:198.51.100.0/24', null);
    const found: Ban[] = [];
    cache.networksOf(parseIp('198.51.100.1'), 0, found);
    expect(found).toEqual([]);
    expect(cache.purgeExpired(200)).toBe(1);
    expect(cache.size).toBe(0);
  });

  it('lists live bans by scope, paged by subject', async () => {
    const cache = new BanCache();
    for (const s of ['ip:192.0.2.3', 'ip:192.0.2.1', 'user:9', 'cidr:10.0.0.0/8']) cache.observe(s, ban(s));
    expect((await cache.list(0, { scope: 'ip', limit: 10 })).map((b) => b.subject)).toEqual(['ip:192.0.2.1', 'ip:192.0.2.3']);
    expect((await cache.list(0, { after: 'ip:192.0.2.1', limit: 2 })).map((b) => b.subject)).toEqual(['ip:192.0.2.3', 'user:9']);
  });
});

describe('BanCache IPv4 address bans', () => {
  it('finds an ip ban by the parsed address and by its subject, and lifts, purges and lists it like any other', async () => {
    const cache = new BanCache();
    cache.observe('ip:203.0.113.9', ban('ip:203.0.113.9', 100));
    cache.observe('ip:2001:db8::9', ban('ip:2001:db8::9'));
    expect(cache.address(parseIp('203.0.113.9'), 0)?.banId).toBe('ip:203.0.113.9');
    expect(cache.address(parseIp('::ffff:203.0.113.9'), 0)?.banId).toBe('ip:203.0.113.9');
    expect(cache.address(parseIp('203.0.113.10'), 0)).toBeUndefined();
    expect(cache.address(parseIp('2001:db8::9'), 0)?.banId).toBe('ip:2001:db8::9');
    expect(cache.subject('ip:203.0.113.9', 0)?.banId).toBe('ip:203.0.113.9');
    expect((await cache.list(0, { scope: 'ip', limit: 10 })).map((b) => b.subject)).toEqual(['ip:2001:db8::9', 'ip:203.0.113.9']);
    expect(cache.size).toBe(2);
    expect(cache.address(parseIp('203.0.113.9'), 100)).toBeUndefined();
    expect(cache.purgeExpired(100)).toBe(1);
    cache.observe('ip:2001:db8::9', null);
    expect(cache.size).toBe(0);
  });

  it('keeps the top and bottom of the address space apart (signed 32-bit keys)', () => {
    const cache = new BanCache();
    cache.observe('ip:255.255.255.255', ban('ip:255.255.255.255'));
    cache.observe('ip:0.0.0.0', ban('ip:0.0.0.0'));
    expect(cache.address(parseIp('255.255.255.255'), 0)?.banId).toBe('ip:255.255.255.255');
    expect(cache.address(parseIp('0.0.0.0'), 0)?.banId).toBe('ip:0.0.0.0');
    expect(cache.address(parseIp('127.255.255.255'), 0)).toBeUndefined();
  });
});

describe('BanCache denials', () => {
  const reasonOf = (built: string[]) => (b: Ban) => {
    built.push(b.banId);
    return `${b.banId} text`;
  };

  it('gives the denial of an address ban from its table entry: policy, status, preview, text built once per ban, retry-after', () => {
    const cache = new BanCache();
    const built: string[] = [];
    cache.observe('ip:203.0.113.9', { ...ban('ip:203.0.113.9', 10_000), policyId: 'flood', httpStatus: 429, preview: true });
    cache.observe('ip:2001:db8::9', ban('ip:2001:db8::9', 10_000));
    const nine = parseIp('203.0.113.9');
    expect(cache.addressDenial(nine, 0, reasonOf(built))).toEqual({
      source: 'ban',
      policyId: 'flood',
      deny: true,
      status: 429,
      preview: true,
      reason: 'ip:203.0.113.9 text',
      retryAfterSeconds: 10,
    });
    expect(cache.addressDenial(nine, 9_999, reasonOf(built))?.retryAfterSeconds).toBe(1);
    expect(cache.addressDenial(nine, 10_000, reasonOf(built))).toBeUndefined();
    expect(cache.addressDenial(parseIp('203.0.113.10'), 0, reasonOf(built))).toBeUndefined();
    expect(cache.addressDenial(parseIp('2001:db8::9'), 0, reasonOf(built))).toMatchObject({ status: 403, preview: false, reason: 'ip:2001:db8::9 text' });
    expect(cache.addressDenial(parseIp('2001:db8::9'), 0, reasonOf(built))?.reason).toBe('ip:2001:db8::9 text');
    expect(built).toEqual(['ip:203.0.113.9', 'ip:2001:db8::9']);

    // A new record for the address (a longer ban, say) gets its own text and facts, not the old ones.
    cache.observe('ip:203.0.113.9', { ...ban('ip:203.0.113.9', 20_000), banId: 'second' });
    expect(cache.addressDenial(nine, 0, reasonOf(built))).toMatchObject({ policyId: 'p', status: 403, preview: false, reason: 'second text', retryAfterSeconds: 20 });
    cache.observe('ip:203.0.113.9', null);
    expect(cache.addressDenial(nine, 0, reasonOf(built))).toBeUndefined();
  });

  it('agrees with the ban itself for any expiry, status and preview, through sets, tombstones and growth', () => {
    const expiry = fc.oneof(
      fc.integer({ min: -5_000, max: 5_000 }),
      fc.constantFrom(0, 2 ** 21 - 1, 2 ** 21, 2 ** 50 - 1, 2 ** 50, Number.MAX_SAFE_INTEGER, -(2 ** 40)),
      fc.integer({ min: 0, max: 2 ** 53 - 1 }),
    );
    const record = fc.option(fc.record({ expiresAt: expiry, httpStatus: fc.constantFrom(403, 429), preview: fc.boolean(), policyId: fc.constantFrom('a', 'b') }), { nil: null });
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.integer({ min: 0, max: 40 }), record), { maxLength: 200 }), fc.integer({ min: -5_000, max: 5_000 }), (ops, now) => {
        const cache = new BanCache();
        const subjectOf = (n: number) => `ip:198.51.100.${n}`;
        for (const [n, r] of ops) cache.observe(subjectOf(n), r === null ? null : { ...ban(subjectOf(n)), ...r });
        const reason = (b: Ban) => `${b.subject} until ${b.expiresAt}`;
        for (let n = 0; n <= 40; n++) {
          const address = parseIp(`198.51.100.${n}`);
          expect(cache.addressDenial(address, now, reason)).toEqual(cache.denial(cache.address(address, now), now, reason));
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe('BanCache at its cap (maxBans)', () => {
  const manual = (subject: string, expiresAt = 10_000): Ban => ({ ...ban(subject, expiresAt), origin: 'manual' });

  it('refuses a ban on a new subject of any kind once full, keeps those held, and still replaces and lifts them', () => {
    const refused: string[] = [];
    const cache = new BanCache({ maxBans: 3, onRefused: (subject) => refused.push(subject) });
    cache.observe('ip:192.0.2.1', ban('ip:192.0.2.1'));
    cache.observe('user:7', ban('user:7'));
    cache.observe('cidr:198.51.100.0/24', ban('cidr:198.51.100.0/24'));
    expect(cache.size).toBe(3);
    // Full: a new address, a new exact subject, a new network are refused, whatever their kind.
    cache.observe('ip:192.0.2.2', ban('ip:192.0.2.2'));
    cache.observe('user:8', ban('user:8'));
    cache.observe('cidr:203.0.113.0/24', ban('cidr:203.0.113.0/24'));
    expect(refused).toEqual(['ip:192.0.2.2', 'user:8', 'cidr:203.0.113.0/24']);
    expect(cache.refused).toBe(3);
    expect(cache.size).toBe(3);
    expect(cache.address(parseIp('192.0.2.2'), 0)).toBeUndefined();
    expect(cache.subject('user:8', 0)).toBeUndefined();
    expect(cache.networksOf(parseIp('203.0.113.1'), 0)).toBeUndefined();
    // Held bans are replaced (a longer ban) at the cap, not refused.
    cache.observe('ip:192.0.2.1', ban('ip:192.0.2.1', 20_000));
    cache.observe('user:7', ban('user:7', 20_000));
    cache.observe('cidr:198.51.100.0/24', ban('cidr:198.51.100.0/24', 20_000));
    expect(cache.address(parseIp('192.0.2.1'), 15_000)).toBeDefined();
    expect(cache.subject('user:7', 15_000)).toBeDefined();
    expect(cache.networksOf(parseIp('198.51.100.1'), 15_000)).toHaveLength(1);
    // The tombstone of a refused ban changes nothing; a lift makes room for the next.
    cache.observe('ip:192.0.2.2', null);
    expect(cache.size).toBe(3);
    cache.observe('user:7', null);
    cache.observe('ip:192.0.2.2', ban('ip:192.0.2.2'));
    expect(cache.address(parseIp('192.0.2.2'), 0)).toBeDefined();
    expect(cache.refused).toBe(3);
  });

  it('always takes a manual ban, past the cap too', () => {
    const cache = new BanCache({ maxBans: 1 });
    cache.observe('ip:192.0.2.1', ban('ip:192.0.2.1'));
    cache.observe('ip:192.0.2.2', manual('ip:192.0.2.2'));
    cache.observe('path:/admin', manual('path:/admin'));
    cache.observe('cidr:203.0.113.0/24', manual('cidr:203.0.113.0/24'));
    expect(cache.size).toBe(4);
    expect(cache.refused).toBe(0);
    expect(cache.address(parseIp('192.0.2.2'), 0)?.origin).toBe('manual');
    expect(cache.subject('path:/admin', 0)?.origin).toBe('manual');
    cache.observe('ip:192.0.2.3', ban('ip:192.0.2.3'));
    expect(cache.refused).toBe(1);
  });

  it('makes room when expired bans are purged, networks included', () => {
    const cache = new BanCache({ maxBans: 2 });
    cache.observe('ip:192.0.2.1', ban('ip:192.0.2.1', 100));
    cache.observe('cidr:198.51.100.0/24', ban('cidr:198.51.100.0/24', 100));
    cache.observe('ip:192.0.2.2', ban('ip:192.0.2.2'));
    expect(cache.refused).toBe(1);
    expect(cache.purgeExpired(100)).toBe(2);
    expect(cache.size).toBe(0);
    cache.observe('ip:192.0.2.2', ban('ip:192.0.2.2'));
    cache.observe('cidr:203.0.113.0/24', ban('cidr:203.0.113.0/24'));
    expect(cache.size).toBe(2);
    expect(cache.networksOf(parseIp('203.0.113.9'), 0)).toHaveLength(1);
  });

  it('refuses a cap it could not keep', () => {
    expect(() => new BanCache({ maxBans: 0 })).toThrow(/1 to 16000000 bans, not 0/);
    expect(() => new BanCache({ maxBans: 16_000_001 })).toThrow(RangeError);
    expect(new BanCache().maxBans).toBe(10_000_000);
  });
});
