import { describe, expect, it } from 'vitest';
import { parseIp } from '@banstream/core';
import type { Ban } from '@banstream/schemas';
import { BanCache } from './ban-cache.js';

const ban = (subject: string, expiresAt = 10_000): Ban => ({
  banId: subject, subject, policyId: 'p', reason: 'r', evidenceCount: 1, windowSeconds: 60, startedAt: 0, expiresAt,
  preview: false, escalationLevel: 0, origin: 'aggregator', httpStatus: 403, createdBy: null,
});

describe('BanCache', () => {
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

  it('lists live bans by scope, paged by subject', () => {
    const cache = new BanCache();
    for (const s of ['ip:192.0.2.3', 'ip:192.0.2.1', 'user:9', 'cidr:10.0.0.0/8']) cache.observe(s, ban(s));
    expect(cache.list(0, { scope: 'ip', limit: 10 }).map((b) => b.subject)).toEqual(['ip:192.0.2.1', 'ip:192.0.2.3']);
    expect(cache.list(0, { after: 'ip:192.0.2.1', limit: 2 }).map((b) => b.subject)).toEqual(['ip:192.0.2.3', 'user:9']);
  });
});

describe('BanCache IPv4 address bans', () => {
  it('finds an ip ban by the parsed address and by its subject, and lifts, purges and lists it like any other', () => {
    const cache = new BanCache();
    cache.observe('ip:203.0.113.9', ban('ip:203.0.113.9', 100));
    cache.observe('ip:2001:db8::9', ban('ip:2001:db8::9'));
    expect(cache.address(parseIp('203.0.113.9'), 0)?.banId).toBe('ip:203.0.113.9');
    expect(cache.address(parseIp('::ffff:203.0.113.9'), 0)?.banId).toBe('ip:203.0.113.9');
    expect(cache.address(parseIp('203.0.113.10'), 0)).toBeUndefined();
    expect(cache.address(parseIp('2001:db8::9'), 0)?.banId).toBe('ip:2001:db8::9');
    expect(cache.subject('ip:203.0.113.9', 0)?.banId).toBe('ip:203.0.113.9');
    expect(cache.list(0, { scope: 'ip', limit: 10 }).map((b) => b.subject)).toEqual(['ip:2001:db8::9', 'ip:203.0.113.9']);
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

describe('BanCache denial texts', () => {
  it('keeps the text of a ban once built, beside the address ban found last or in a side table, and builds it anew for a replaced ban', () => {
    const cache = new BanCache();
    const built: string[] = [];
    const text = (b: Ban) => {
      built.push(b.banId);
      return `${b.banId} text`;
    };
    cache.observe('ip:203.0.113.9', ban('ip:203.0.113.9'));
    cache.observe('ip:203.0.113.10', ban('ip:203.0.113.10'));
    cache.observe('user:7', ban('user:7'));
    const nine = cache.address(parseIp('203.0.113.9'), 0)!;
    const ten = cache.address(parseIp('203.0.113.10'), 0)!;
    // The last address found was .10: the text of .9 comes from the side table, and stays right.
    expect(cache.denialText(nine, text)).toBe('ip:203.0.113.9 text');
    expect(cache.denialText(ten, text)).toBe('ip:203.0.113.10 text');
    expect(cache.denialText(ten, text)).toBe('ip:203.0.113.10 text');
    const user = cache.subject('user:7', 0)!;
    expect(cache.denialText(user, text)).toBe('user:7 text');
    expect(cache.denialText(user, text)).toBe('user:7 text');
    expect(cache.denialText(cache.address(parseIp('203.0.113.9'), 0)!, text)).toBe('ip:203.0.113.9 text');
    expect(cache.denialText(cache.address(parseIp('203.0.113.9'), 0)!, text)).toBe('ip:203.0.113.9 text');
    expect(built).toEqual(['ip:203.0.113.9', 'ip:203.0.113.10', 'user:7', 'ip:203.0.113.9']);

    // A new record for the address (a longer ban, say) gets its own text, not the old one.
    cache.observe('ip:203.0.113.10', { ...ban('ip:203.0.113.10'), banId: 'second' });
    const second = cache.address(parseIp('203.0.113.10'), 0)!;
    expect(cache.denialText(second, text)).toBe('second text');
    // An expired ban found by address leaves no stale slot behind for the next text.
    cache.observe('ip:203.0.113.11', ban('ip:203.0.113.11', 5));
    expect(cache.address(parseIp('203.0.113.11'), 10)).toBeUndefined();
    expect(cache.denialText(nine, text)).toBe('ip:203.0.113.9 text');
  });
});
